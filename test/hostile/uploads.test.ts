import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilesRepository } from '../../src/files/files.repository.js';
import { TEST_DBS } from '../support/harness.js';
import { fixture, makeZipBomb } from '../files/builders.js';
import * as h from '../files/hostile-builders.js';
import { createAgent, enableWebhook, hook, listTasks, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/**
 * Issue 20: uploads that crashed, froze or bloated the service, sent to a public webhook URL. Each must be answered
 * with the right 4xx and `{"detail": ...}`, store nothing, start no task, and leave the service answering.
 */

const MB = 1024 * 1024;

function form(name: string, bytes: Uint8Array): FormData {
  const fd = new FormData();
  fd.set('prompt', 'Read the attachment');
  fd.set('asynchronous', 'false');
  fd.append('files', new Blob([Buffer.from(bytes)]), name);
  return fd;
}

interface Case {
  what: string;
  name: string;
  make: () => Uint8Array;
  status: 413 | 415;
  detail?: string;
}

const CASES: Case[] = [
  { what: 'a 73-byte PNG with corrupt image data (crashed the OCR library)', name: 'tiny.png', make: h.makeCorruptPng, status: 415 },
  { what: 'a PNG claiming 60000x60000', name: 'vast.png', make: () => h.makePngClaiming(60000, 60000), status: 413, detail: '60000x60000' },
  { what: 'a PNG whose header is garbage', name: 'broken.png', make: h.makePngWithBrokenHeader, status: 415 },
  { what: 'an XLSX with more real cells than the limit', name: 'cells.xlsx', make: () => h.makeXlsxWithCells(20_000), status: 413, detail: 'cells' },
  { what: 'a DOCX whose XML inflates far beyond what the reader can hold', name: 'bloat.docx', make: () => h.makeHugeDocx(40), status: 413, detail: 'MB of memory' },
  { what: 'a zip bomb', name: 'bomb.zip', make: makeZipBomb, status: 413, detail: 'archive limits' },
  { what: 'a PDF of garbage', name: 'garbage.pdf', make: h.makeGarbagePdf, status: 415 },
];

describe.each(TEST_DBS)('hostile uploads (%s)', (kind) => {
  let w: WebhookWorld;
  let url: string;
  let agentId: string;
  let orgA: string;
  let baselineRss = 0;

  const storedFiles = async () => new FilesRepository(w.server.container.db).count(orgA);
  const blobCount = () => (existsSync(join(w.env.dataDir, 'files', orgA)) ? readdirSync(join(w.env.dataDir, 'files', orgA)).length : 0);

  beforeAll(async () => {
    w = await startWebhookWorld(kind, {
      AGENTRY_MAX_FILE_BYTES: String(8 * MB),
      AGENTRY_MAX_SHEET_CELLS: '10000',
      // Lower than the default (1024) so the DOCX reaches the ceiling in seconds.
      AGENTRY_EXTRACT_MEMORY_MB: '600',
      AGENTRY_EXTRACT_TIMEOUT_MS: '60000',
    });
    w.llm.handle(() => ({ text: 'read it' }));
    orgA = (await w.server.container.orgs.findOrganizationByName('org-a'))!.id;
    agentId = await createAgent(w);
    url = await enableWebhook(w, agentId);
    baselineRss = process.memoryUsage().rss;
  });
  afterAll(async () => w?.close());

  it.each(CASES)('answers $status to $what, storing and starting nothing', async (c) => {
    const [files, blobs, tasks] = [await storedFiles(), blobCount(), (await listTasks(w, agentId)).length];
    const r = await hook(w, url, { multipart: form(c.name, c.make()) });
    expect(r.status, JSON.stringify(r.json)).toBe(c.status);
    expect(r.json).toEqual({ detail: expect.stringContaining(`'${c.name}'`) });
    if (c.detail) expect(r.json.detail).toContain(c.detail);
    expect(await storedFiles()).toBe(files);
    expect(blobCount()).toBe(blobs);
    expect((await listTasks(w, agentId)).length).toBe(tasks);
  });

  it('reads a sheet declaring A1:XFD1048576 around three cells at once, with its real content', async () => {
    const t = Date.now();
    const r = await hook(w, url, { multipart: form('sparse.xlsx', h.makeSparseXlsx()) });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(Date.now() - t).toBeLessThan(15_000);
    const seen = JSON.stringify(w.llm.requests.at(-1)!.body.messages);
    expect(seen).toContain('TAPIR');
    expect(seen).toContain('FAR');
  });

  it('reads an XLS whose DIMENSIONS record declares 65536 x 256 cells, with its real content', async () => {
    const r = await hook(w, url, { multipart: form('sparse.xls', h.makeSparseXls()) });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(JSON.stringify(w.llm.requests.at(-1)!.body.messages)).toContain('OKAPI');
  });

  it('still answers /health and a normal upload afterwards, with bounded memory', async () => {
    expect((await fetch(`${w.hooks}/health`)).status).toBe(200);
    expect((await fetch(`${w.api}/health`)).status).toBe(200);
    const r = await hook(w, url, { multipart: form('scan.png', fixture('ocr.png')) });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(JSON.stringify(w.llm.requests.at(-1)!.body.messages)).toContain('PELICAN');
    // Every decoder ran in the extraction host: this process grew by little more than the requests themselves.
    expect(process.memoryUsage().rss - baselineRss).toBeLessThan(300 * MB);
  });
});

describe.each(TEST_DBS)('extraction host limits (%s)', (kind) => {
  let w: WebhookWorld;
  let url: string;

  beforeAll(async () => {
    // A deadline no OCR can meet, and no queue: the kill path and the 503 are both reachable on demand.
    w = await startWebhookWorld(kind, { AGENTRY_EXTRACT_TIMEOUT_MS: '150', AGENTRY_EXTRACT_QUEUE: '0' });
    w.llm.handle(() => ({ text: 'read it' }));
    url = await enableWebhook(w, await createAgent(w));
    // Warms the host: a fresh child gets its start-up time before a file's deadline starts.
    expect((await hook(w, url, { multipart: form('warm.txt', Buffer.from('warm up')) })).status).toBe(200);
  });
  afterAll(async () => w?.close());

  it('kills the host at the deadline: 413 for that file, and the next upload gets a fresh host', async () => {
    const r = await hook(w, url, { multipart: form('slow.png', fixture('ocr.png')) });
    expect(r.status, JSON.stringify(r.json)).toBe(413);
    expect(r.json.detail).toContain("'slow.png'");
    expect(r.json.detail).toContain('took longer than');
    const next = await hook(w, url, { multipart: form('after.txt', Buffer.from('still ALIVE')) });
    expect(next.status, JSON.stringify(next.json)).toBe(200);
  });

  it('answers 503 with Retry-After when every host is busy and the queue is full', async () => {
    // A kill leaves no host; the next call waits for a fresh one to start (a few hundred ms) and then for its
    // deadline, holding the only host while the second call finds no room.
    expect((await hook(w, url, { multipart: form('killed.png', fixture('ocr.png')) })).status).toBe(413);
    const first = hook(w, url, { multipart: form('a.png', fixture('ocr.png')) });
    await new Promise((res) => setTimeout(res, 300));
    const second = await hook(w, url, { multipart: form('b.txt', Buffer.from('text')) });
    expect(second.status, JSON.stringify(second.json)).toBe(503);
    expect(second.json).toEqual({ detail: expect.any(String) });
    expect(second.headers.get('retry-after')).toBe('5');
    // The deadline applies from the moment the fresh host is ready, not after a start-up allowance.
    expect((await first).status).toBe(413);
  });
});
