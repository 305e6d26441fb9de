import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilesRepository } from '../../src/files/files.repository.js';
import { TEST_DBS } from '../support/harness.js';
import { everyAcceptedType, makeExe, makeZipBomb } from '../files/builders.js';
import { api, createAgent, enableWebhook, hook, listTasks, startWebhookWorld, type WebhookWorld } from './webhook-helpers.js';

const MB = 1024 * 1024;

function formWith(fields: Record<string, string>, files: { field?: string; name: string; bytes: Uint8Array }[]): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  for (const f of files) fd.append(f.field ?? 'files', new Blob([Buffer.from(f.bytes)]), f.name);
  return fd;
}

describe.each(TEST_DBS)('webhook uploads (%s)', (kind) => {
  let w: WebhookWorld;
  let agentId: string;
  let url: string;
  let orgA: string;

  const storedFiles = async () => new FilesRepository(w.server.container.db).count(orgA);
  const blobDir = () => join(w.env.dataDir, 'files', orgA);
  const blobCount = () => (existsSync(blobDir()) ? readdirSync(blobDir()).length : 0);

  beforeAll(async () => {
    w = await startWebhookWorld(kind, { AGENTRY_MAX_FILE_BYTES: String(3 * MB), AGENTRY_MAX_REQUEST_BYTES: String(4 * MB) });
    w.llm.handle(() => ({ text: 'read it' }));
    orgA = (await w.server.container.orgs.findOrganizationByName('org-a'))!.id;
    agentId = await createAgent(w);
    url = await enableWebhook(w, agentId);
  });
  afterAll(async () => w?.close());

  it('extracts an upload of every accepted type into the model context, with the file URLs', async () => {
    const files = everyAcceptedType();
    // Any field name carries a file.
    const fd = formWith(
      { prompt: 'Summarise the attachments', asynchronous: 'false' },
      files.map((f, i) => ({ ...f, field: i % 2 ? 'files' : `attachment_${i}` })),
    );
    const before = w.llm.requests.length;
    const r = await hook(w, url, { multipart: fd });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.status).toBe('completed');
    const seen = JSON.stringify(w.llm.requests.slice(before).map((q) => q.body.messages));
    for (const f of files) expect(seen, f.name).toContain(f.word);
    const task = (await api(w, 'GET', `/v1/tasks/${r.json.id}`)).json;
    expect(task.input.files.map((f: any) => f.name).sort()).toEqual(files.map((f) => f.name).sort());
    for (const f of task.input.files) expect(seen).toContain(f.url);
    // The presigned URL serves the bytes without a key.
    const pdf = task.input.files.find((f: any) => f.name === 'report.pdf');
    const got = await fetch(pdf.url);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(files.find((f) => f.name === 'report.pdf')!.bytes)).toBe(true);
  });

  it('keeps file text out of the context with disable_attachment_injection, but still gives the URLs', async () => {
    const before = w.llm.requests.length;
    const fd = formWith({ prompt: 'Just the links', asynchronous: 'false', disable_attachment_injection: 'true' }, [
      { name: 'secret.txt', bytes: Buffer.from('The hidden word is QUOKKA') },
    ]);
    const r = await hook(w, url, { multipart: fd });
    expect(r.json.status).toBe('completed');
    const seen = JSON.stringify(w.llm.requests.slice(before).map((q) => q.body.messages));
    const task = (await api(w, 'GET', `/v1/tasks/${r.json.id}`)).json;
    expect(seen).toContain(task.input.files[0].url);
    expect(seen).not.toContain('QUOKKA');
  });

  it('refuses a disguised executable with 415 naming it, storing and running nothing', async () => {
    const [tasksBefore, filesBefore, blobsBefore, llmBefore] = [(await listTasks(w, agentId)).length, await storedFiles(), blobCount(), w.llm.requests.length];
    const fd = formWith({ prompt: 'open this' }, [
      { name: 'fine.txt', bytes: Buffer.from('harmless') },
      { name: 'invoice.pdf', bytes: makeExe() },
    ]);
    const r = await hook(w, url, { multipart: fd });
    expect(r.status).toBe(415);
    expect(r.json.detail).toContain("'invoice.pdf'");
    expect((await listTasks(w, agentId)).length).toBe(tasksBefore);
    expect(await storedFiles()).toBe(filesBefore);
    expect(blobCount()).toBe(blobsBefore);
    expect(w.llm.requests.length).toBe(llmBefore);
  });

  it('refuses a zip bomb with 413 before anything is stored', async () => {
    const [tasksBefore, filesBefore, blobsBefore] = [(await listTasks(w, agentId)).length, await storedFiles(), blobCount()];
    const r = await hook(w, url, { multipart: formWith({ prompt: 'unzip' }, [{ name: 'archive.zip', bytes: makeZipBomb() }]) });
    expect(r.status).toBe(413);
    expect(r.json.detail).toContain("'archive.zip'");
    expect((await listTasks(w, agentId)).length).toBe(tasksBefore);
    expect(await storedFiles()).toBe(filesBefore);
    expect(blobCount()).toBe(blobsBefore);
  });

  it('refuses files over the per-file and per-request limits with 413', async () => {
    const filesBefore = await storedFiles();
    const big = await hook(w, url, { multipart: formWith({ prompt: 'big' }, [{ name: 'huge.txt', bytes: Buffer.alloc(3 * MB + 1, 'a') }]) });
    expect(big.status).toBe(413);
    expect(big.json.detail).toContain("'huge.txt'");
    const two = await hook(w, url, {
      multipart: formWith({ prompt: 'two' }, [
        { name: 'a.txt', bytes: Buffer.alloc(2.5 * MB, 'a') },
        { name: 'b.txt', bytes: Buffer.alloc(2.5 * MB, 'b') },
      ]),
    });
    expect(two.status).toBe(413);
    expect(await storedFiles()).toBe(filesBefore);
  });

  it('bounds a body apart from its uploads (AGENTRY_MAX_BODY_BYTES, 10 MiB): text fields and JSON over it are a 413, nothing stored', async () => {
    const [tasksBefore, filesBefore, blobsBefore] = [(await listTasks(w, agentId)).length, await storedFiles(), blobCount()];
    // Eleven text fields of 1 MB each (under the 1 MiB a field may have) and a small file.
    const fields: Record<string, string> = { prompt: 'many fields' };
    for (let i = 0; i < 11; i++) fields[`note_${i}`] = 'n'.repeat(1_000_000);
    const manyFields = await hook(w, url, { multipart: formWith(fields, [{ name: 'small.txt', bytes: Buffer.from('hello') }]) });
    expect(manyFields.status).toBe(413);
    expect(manyFields.json.detail).toBe(`Request too large: the text fields may total at most ${10 * MB} bytes`);
    // A JSON prompt of 11 MB: not an upload, whatever the upload limit (4 MB here, 100 MiB by default) says.
    const json = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'p'.repeat(11 * 1_000_000) }) });
    expect(json.status).toBe(413);
    await json.arrayBuffer();
    expect([(await listTasks(w, agentId)).length, await storedFiles(), blobCount()]).toEqual([tasksBefore, filesBefore, blobsBefore]);
  });

  it('gives uploads to an asynchronous call only once they are stored with the task', async () => {
    const fd = formWith({ prompt: 'async upload', task_id: 'upload-async-1' }, [{ name: 'n.csv', bytes: Buffer.from('a,b\n1,2\n') }]);
    const r = await hook(w, url, { multipart: fd });
    expect(r.json).toEqual({ status: 'Started' });
    // Answered Started: the task and its file exist now, whatever the worker has done so far.
    const task = (await api(w, 'GET', '/v1/tasks/upload-async-1')).json;
    expect(task.input.files).toHaveLength(1);
    expect((await fetch(task.input.files[0].url)).status).toBe(200);
  });
});
