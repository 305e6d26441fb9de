import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BlobStoreTimeout, BlobTooLarge } from '../../src/files/blob-store-errors.js';
import { S3BlobStore } from '../../src/files/s3-blob-store.js';
import { s3Env, startS3Server, type FakeS3 } from '../fakes/s3-server.js';
import { createKb, uploadFiles } from '../knowledge/kb-helpers.js';
import { TEST_DBS } from '../support/harness.js';
import { lifetimeApp, multipart, type LifetimeApp } from './lifetime-app.js';

const creds = { accessKeyId: 'AKTEST', secretAccessKey: 'secret', region: 'eu-west-3' };
/** Short, so a test waits a fraction of a second for what a real store would be given 30 s. */
const TIMEOUT_MS = 300;

/** A TCP server on 127.0.0.1 that accepts every connection and never sends a byte. */
async function startSilentServer(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => accepted,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('S3BlobStore against an endpoint that never answers or never stops', () => {
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let s3: FakeS3;
  beforeAll(async () => {
    silent = await startSilentServer();
    s3 = await startS3Server(creds);
  });
  afterAll(async () => {
    await silent?.close();
    await s3?.close();
  });
  const store = (endpoint: string, maxObjectBytes = 1024) => new S3BlobStore({ endpoint, bucket: 'b', ...creds, timeoutMs: TIMEOUT_MS, maxObjectBytes });

  it('fails each call with BlobStoreTimeout once its deadline passes', async () => {
    const s = store(silent.url);
    for (const call of [() => s.put('o/k', Buffer.from('x'), 'text/plain'), () => s.get('o/k'), () => s.delete('o/k')]) {
      const started = performance.now();
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(BlobStoreTimeout);
      expect((err as Error).message).toMatch(/no answer within 300 ms/);
      expect(performance.now() - started).toBeLessThan(3000);
    }
    expect(silent.connections()).toBeGreaterThanOrEqual(1);
  });

  it('reads no object larger than its bound: a declared length is refused before reading, an endless answer once past it', async () => {
    const s = store(s3.url);
    s3.objects.set('b/o/big', Buffer.alloc(4096));
    await expect(s.get('o/big')).rejects.toBeInstanceOf(BlobTooLarge);
    s3.objects.set('b/o/small', Buffer.alloc(10, 0x62));
    expect((await s.get('o/small'))?.length).toBe(10);
    s3.endlessGets = true;
    try {
      await expect(s.get('o/small')).rejects.toBeInstanceOf(BlobTooLarge);
    } finally {
      s3.endlessGets = false;
    }
  });
});

describe.each(TEST_DBS)('a stalled S3 store fails calls in time and loses nothing (%s)', (kind) => {
  let s3: FakeS3;
  let a: LifetimeApp;
  beforeAll(async () => {
    s3 = await startS3Server(creds);
    a = await lifetimeApp(kind, {
      env: {
        ...s3Env(s3, creds),
        AGENTRY_S3_TIMEOUT_MS: String(TIMEOUT_MS),
        // A read is bounded by the larger upload limit: 8 KiB here.
        AGENTRY_MAX_FILE_BYTES: '4096',
        AGENTRY_MAX_REQUEST_BYTES: '8192',
      },
    });
  });
  afterAll(async () => {
    await a?.t.close();
    await s3?.close();
  });
  afterEach(() => {
    s3.stall = false;
    s3.endlessGets = false;
  });
  const object = (id: string) => s3.objects.has(`files/${a.t.orgA}/${id}`);
  const fileCount = async () => Number((await a.k.selectFrom('files').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('an upload is refused 503 with Retry-After within its deadline, and leaves no file and no task', async () => {
    const files = await fileCount();
    const tasks = (await a.t.req('GET', '/v1/tasks?per_page=1')).json().total;
    s3.stall = true;
    const started = performance.now();
    const { payload, headers } = await multipart({ text: 'read this' }, [{ name: 'a.txt', text: 'never stored' }]);
    const invoke = await a.t.app.inject({ method: 'POST', url: `/v1/agents/${a.agentId}/invoke/async`, payload, headers: { ...headers, 'x-api-key': a.t.keyA } });
    expect(invoke.statusCode, invoke.body).toBe(503);
    expect(invoke.json()).toEqual({ detail: 'File storage did not answer in time; retry later' });
    expect(invoke.headers['retry-after']).toBe('5');
    const kb = await createKb(a.t, 'stalled');
    const doc = await uploadFiles(a.t, kb, [{ name: 'b.md', content: '# never stored' }]);
    expect(doc.statusCode, doc.body).toBe(503);
    expect(doc.json()).toEqual({ detail: 'File storage did not answer in time; retry later' });
    // Each: one deadline for the blob, one for removing it again.
    expect(performance.now() - started).toBeLessThan(8 * TIMEOUT_MS + 3000);
    expect(await fileCount()).toBe(files);
    expect((await a.t.req('GET', '/v1/tasks?per_page=1')).json().total).toBe(tasks);
    expect((await a.t.req('GET', `/v1/knowledge/${kb}/documents`)).json().total).toBe(0);
    // Whether or not the store kept what it was sent, both blobs are recorded for the sweep.
    expect(await a.pendingDeletions()).toHaveLength(2);
    s3.stall = false;
    expect(await a.t.c.fileSweep.sweep()).toMatchObject({ blobsFailed: 0 });
    expect(await a.pendingDeletions()).toEqual([]);
  });

  it('a download is a 503 while the store is stalled, and a 502 when it answers more bytes than any file has', async () => {
    const task = await a.invoke('keep this', [{ name: 'c.txt', text: 'stored' }]);
    await a.t.waitTask(task.id);
    const file = task.input.files[0]!;
    s3.stall = true;
    const stalled = await a.signed(file.url);
    expect(stalled.statusCode).toBe(503);
    expect(stalled.json()).toEqual({ detail: 'File storage did not answer in time; retry later' });
    s3.stall = false;
    expect((await a.signed(file.url)).body).toBe('stored');

    s3.endlessGets = true;
    const endless = await a.signed(file.url);
    expect(endless.statusCode).toBe(502);
    expect(endless.json()).toEqual({ detail: 'File storage answered with more bytes than any stored file has' });
  });

  it("a task delete waits about one deadline, not one per blob; the sweep counts the deletes as failed and retries them", async () => {
    const names = Array.from({ length: 10 }, (_, i) => ({ name: `f${i}.txt`, text: `file ${i}` }));
    const task = await a.invoke('ten files', names);
    await a.t.waitTask(task.id);
    const ids = task.input.files.map((f) => f.id).sort();
    s3.stall = true;
    let requests = s3.requests;
    const del = await a.t.req('DELETE', `/v1/tasks/${task.id}`);
    expect(del.statusCode, del.body).toBe(200);
    // The first 8 deletions go out together; once they time out no further one starts.
    expect(s3.requests - requests).toBe(8);
    expect(await a.rows(ids)).toEqual([]);
    expect((await a.pendingDeletions()).sort()).toEqual(ids);

    requests = s3.requests;
    expect(await a.t.c.fileSweep.sweep()).toMatchObject({ blobsRemoved: 0, blobsFailed: 10 });
    expect(s3.requests - requests).toBe(8);
    expect((await a.pendingDeletions()).sort()).toEqual(ids);

    s3.stall = false;
    expect(await a.t.c.fileSweep.sweep()).toMatchObject({ blobsRemoved: 10, blobsFailed: 0 });
    for (const id of ids) expect(object(id)).toBe(false);
    expect(await a.pendingDeletions()).toEqual([]);
  });
});
