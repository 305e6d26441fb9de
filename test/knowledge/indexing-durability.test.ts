import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { ChunkStoreRepository } from '../../src/knowledge/chunk-store.repository.js';
import { DocumentReader } from '../../src/knowledge/document-reader.js';
import { JobQueueRepository } from '../../src/knowledge/job-queue.repository.js';
import { JobWakeups } from '../../src/knowledge/job-wakeups.js';
import { KnowledgeIndexer } from '../../src/knowledge/knowledge.indexer.js';
import { KnowledgeRepository } from '../../src/knowledge/knowledge.repository.js';
import { INDEX_JOB } from '../../src/knowledge/knowledge.service.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { createKb, serve, startDocServer, uploadFiles, waitForDocuments, type DocServer } from './kb-helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const LEASE_ENV = { AGENTRY_TASK_LEASE_MS: '1000', AGENTRY_EGRESS_ALLOW: '127.0.0.1' };

/** `agentry serve` with only the worker role, on the test app's database. */
function spawnWorker(t: TestApp): ChildProcess {
  return spawn(process.execPath, [join(ROOT, 'bin', 'agentry.mjs'), 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...t.testEnv.env, ...LEASE_ENV, AGENTRY_ROLES: 'worker' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

describe.each(TEST_DBS)('durable indexing (%s)', (kind) => {
  let t: TestApp;
  let docs: DocServer;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    docs = await startDocServer();
    t = await createTestApp(kind, { env: LEASE_ENV });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await t?.close();
    await docs?.close();
  });

  it('a document whose worker is SIGKILLed mid-indexing is indexed by another worker', async () => {
    let fetched!: () => void;
    const fetchStarted = new Promise<void>((r) => (fetched = r));
    let hold = true;
    // The first fetch hangs (the worker is busy indexing when it dies); later fetches answer.
    docs.routes.set('/slow.md', (_req, res) => {
      fetched();
      if (!hold) serve('text/markdown', '# Survivor\n\nThe lighthouse survived the storm of 1703.')(_req, res);
    });
    const kbId = await createKb(t, 'Durable');
    const added = await t.req('POST', `/v1/knowledge/${kbId}/documents`, { document_urls: [`${docs.url}/slow.md`] });
    const docId = added.json()[0].id;

    const worker = spawnWorker(t);
    children.push(worker);
    const exited = new Promise((r) => worker.once('exit', (_code, signal) => r(signal)));
    try {
      let stderr = '';
      worker.stderr!.on('data', (d) => (stderr += d));
      await Promise.race([fetchStarted, exited.then(() => Promise.reject(new Error(`worker exited early: ${stderr}`)))]);
      expect((await t.req('GET', `/v1/knowledge/${kbId}/documents/${docId}`)).json().status).toBe('indexing');
    } finally {
      worker.kill('SIGKILL');
    }
    expect(await exited).toBe('SIGKILL');

    hold = false;
    await t.c.knowledgeIndexer.start();
    const [doc] = await waitForDocuments(t, kbId);
    expect(doc).toMatchObject({ id: docId, status: 'ready', status_reason: null });
    expect(docs.requests.filter((u) => u === '/slow.md')).toHaveLength(2);
    const job = await t.c.db.kysely.selectFrom('jobs').selectAll().where('ref_id', '=', docId).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ status: 'done', attempts: 2 });
    const hits = (await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=storm`)).json();
    expect(hits[0].content).toContain('survived the storm of 1703');
    await t.c.knowledgeIndexer.stop();
    // Starting a process through tsx takes seconds, and longer on a loaded CI machine.
  }, 120_000);

  it('a job whose workers die on every attempt ends the document in error with the reason', async () => {
    docs.routes.set('/never.md', serve('text/markdown', '# Never indexed'));
    const kbId = await createKb(t, 'Unlucky');
    const docId = (await t.req('POST', `/v1/knowledge/${kbId}/documents`, { document_urls: [`${docs.url}/never.md`] })).json()[0].id;
    // Three workers claim it in turn and die at once (their 1 ms leases run out): the attempts are used up.
    const jobs = new JobQueueRepository(t.c.db);
    const pause = () => new Promise((r) => setTimeout(r, 5));
    expect(await jobs.claimDue(INDEX_JOB, 'dead-1', Date.now(), 1)).toMatchObject({ ref_id: docId, attempts: 1 });
    await pause();
    expect(await jobs.claimExpired(INDEX_JOB, 'dead-2', Date.now(), 1)).toMatchObject({ ref_id: docId, attempts: 2 });
    await pause();
    expect(await jobs.claimExpired(INDEX_JOB, 'dead-3', Date.now(), 1)).toMatchObject({ ref_id: docId, attempts: 3 });
    await pause();
    expect(await jobs.claimExpired(INDEX_JOB, 'dead-4', Date.now(), 1)).toBeUndefined();

    await t.c.knowledgeIndexer.start();
    const [doc] = await waitForDocuments(t, kbId);
    expect(doc).toMatchObject({ id: docId, status: 'error', status_reason: 'Indexing stopped: the worker processing this document stopped 3 times' });
    expect(docs.requests).not.toContain('/never.md');
    await t.c.knowledgeIndexer.stop();
  });

  it('a worker shutting down mid-indexing hands the job back with its attempt refunded', async () => {
    let fetched!: () => void;
    const fetchStarted = new Promise<void>((r) => (fetched = r));
    let hold = true;
    docs.routes.set('/pause.md', (req, res) => {
      fetched();
      if (!hold) serve('text/markdown', '# Resumed\n\nIndexing picked up where it stopped.')(req, res);
    });
    const kbId = await createKb(t, 'Graceful');
    const docId = (await t.req('POST', `/v1/knowledge/${kbId}/documents`, { document_urls: [`${docs.url}/pause.md`] })).json()[0].id;
    await t.c.knowledgeIndexer.start();
    await fetchStarted;
    await t.c.knowledgeIndexer.stop();
    expect((await t.req('GET', `/v1/knowledge/${kbId}/documents/${docId}`)).json()).toMatchObject({ status: 'queued', status_reason: null });
    const job = await t.c.db.kysely.selectFrom('jobs').selectAll().where('ref_id', '=', docId).executeTakeFirstOrThrow();
    expect(job).toMatchObject({ status: 'queued', attempts: 0, lease_owner: null });

    hold = false;
    await t.c.knowledgeIndexer.start();
    const [doc] = await waitForDocuments(t, kbId);
    expect(doc).toMatchObject({ status: 'ready' });
    await t.c.knowledgeIndexer.stop();
  });
});

describe.skipIf(!TEST_DBS.includes('postgres'))('job notifications across processes (postgres)', () => {
  it('wakes a worker on another connection as soon as a document is queued, without waiting for its poll', async () => {
    const t = await createTestApp('postgres');
    // A second "process": its own database pool and a worker that would poll only once a minute.
    const db = openDatabase({ url: t.testEnv.env.DATABASE_URL, sqlitePath: ':memory:' });
    const log = createLogger('silent');
    const worker = new KnowledgeIndexer(
      new JobQueueRepository(db),
      new KnowledgeRepository(db),
      new ChunkStoreRepository(db),
      new DocumentReader(t.c.files, fetch, { maxBytes: 1_000_000, fetchTimeoutMs: 10_000 }),
      undefined,
      systemClock,
      log,
      { concurrency: 1, leaseMs: 5000, pollMs: 60_000, retryBaseMs: 1000 },
      new JobWakeups(db, log),
    );
    try {
      await worker.start();
      // Let its first (empty) poll pass: from now on only a notification can wake it within the minute.
      await new Promise((r) => setTimeout(r, 300));
      const kbId = await createKb(t, 'Notified');
      await uploadFiles(t, kbId, [{ name: 'bell.md', content: '# Bell\n\nThe fog bell rings every thirty seconds.' }]);
      const [doc] = await waitForDocuments(t, kbId, 20_000);
      expect(doc).toMatchObject({ status: 'ready' });
    } finally {
      await worker.stop();
      await db.close();
      await t.close();
    }
  });
});
