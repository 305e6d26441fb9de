import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { TEST_DBS } from '../support/harness.js';
import { s3Env, startS3Server, type FakeS3 } from '../fakes/s3-server.js';
import { DAY, HOUR, lifetimeApp, type LifetimeApp } from './lifetime-app.js';

describe.each(TEST_DBS)('uploaded files go with their task (%s)', (kind) => {
  let a: LifetimeApp;
  beforeAll(async () => {
    a = await lifetimeApp(kind);
  });
  afterAll(async () => a?.t.close());
  afterEach(() => {
    a.clock.offset = 0;
  });

  it('an API delete removes its uploads: rows, text and blobs; their URL is then the 403 of an unknown id, the keyed read 404', async () => {
    const task = await a.invoke('read this', [{ name: 'secret.txt', text: 'the password is OSPREY' }]);
    await a.t.waitTask(task.id);
    const [file] = task.input.files;
    expect(await a.rows([file!.id])).toEqual([{ id: file!.id, task_id: task.id }]);
    expect(a.blobExists(file!.id)).toBe(true);
    expect((await a.signed(file!.url)).statusCode).toBe(200);

    expect((await a.t.req('DELETE', `/v1/tasks/${task.id}`)).statusCode).toBe(200);
    expect(await a.rows([file!.id])).toEqual([]);
    expect(a.blobExists(file!.id)).toBe(false);
    expect(await a.pendingDeletions()).toEqual([]);
    const gone = await a.signed(file!.url);
    expect(gone.statusCode).toBe(403);
    expect(gone.json()).toEqual({ detail: 'Invalid or expired file signature' });
    const keyed = await a.t.req('GET', `/v1/files/${file!.id}`);
    expect(keyed.statusCode).toBe(404);
    expect(keyed.json()).toEqual({ detail: 'File not found' });
  });

  it('a webhook upload is stored under the id of its task, also while the task waits in the task inbox, and goes with it', async () => {
    const taskId = await a.webhook('summarise', [{ name: 'a.txt', text: 'first' }, { name: 'b.txt', text: 'second' }]);
    const task = await a.t.waitTask(taskId);
    const ids = task.input.files.map((f) => f.id);
    expect((await a.rows(ids)).map((r) => r.task_id)).toEqual([taskId, taskId]);
    expect((await a.t.req('DELETE', `/v1/tasks/${taskId}`)).statusCode).toBe(200);
    expect(await a.rows(ids)).toEqual([]);
    for (const id of ids) expect(a.blobExists(id)).toBe(false);
  });

  it("keeps a conversation's earlier uploads while it lives and removes every run's with it; another task's stay", async () => {
    const first = await a.invoke('run one', [{ name: 'one.txt', text: 'run one file' }]);
    await a.t.waitTask(first.id);
    // The next run replaces the task's input_files; the first run's file is still the conversation's.
    const second = await a.invoke('run two', [{ name: 'two.txt', text: 'run two file' }], first.id);
    expect(second.id).toBe(first.id);
    await a.t.waitTask(first.id);
    // A webhook continuation (task_id) stores its upload under the conversation too.
    await a.webhook('run three', [{ name: 'three.txt', text: 'run three file' }], { task_id: first.id });
    const third = await a.t.waitTask(first.id, (t) => t.input.text === 'run three' && t.status === 'completed');
    const other = await a.invoke('another task', [{ name: 'other.txt', text: 'not yours' }]);
    await a.t.waitTask(other.id);
    const conversation = [first, second, third].map((t) => t.input.files[0]!.id);
    expect((await a.rows(conversation)).map((r) => r.task_id)).toEqual([first.id, first.id, first.id]);
    for (const id of conversation) expect(a.blobExists(id)).toBe(true);

    expect((await a.t.req('DELETE', `/v1/tasks/${first.id}`)).statusCode).toBe(200);
    expect(await a.rows(conversation)).toEqual([]);
    for (const id of conversation) expect(a.blobExists(id)).toBe(false);
    const kept = other.input.files[0]!;
    expect(await a.rows([kept.id])).toEqual([{ id: kept.id, task_id: other.id }]);
    expect((await a.signed(kept.url)).statusCode).toBe(200);
  });

  it('the retention sweep removes the uploads of the tasks it expires, and keeps the others', async () => {
    const old = await a.invoke('old', [{ name: 'old.txt', text: 'expires' }]);
    await a.t.waitTask(old.id);
    a.clock.offset = 2 * DAY;
    const recent = await a.invoke('recent', [{ name: 'recent.txt', text: 'stays' }]);
    await a.t.waitTask(recent.id);
    const r = await a.t.c.taskRetention.sweep();
    expect(r?.deleted).toBeGreaterThanOrEqual(1);
    expect((await a.t.req('GET', `/v1/tasks/${old.id}`)).statusCode).toBe(404);
    const [gone, kept] = [old.input.files[0]!.id, recent.input.files[0]!.id];
    expect(await a.rows([gone])).toEqual([]);
    expect(a.blobExists(gone)).toBe(false);
    expect(await a.rows([kept])).toEqual([{ id: kept, task_id: recent.id }]);
    expect(a.blobExists(kept)).toBe(true);
    expect(await a.pendingDeletions()).toEqual([]);
  });

  it('the file sweep deletes an upload whose task was never committed once it is an hour old, and never a document file', async () => {
    const [orphan] = await a.t.c.files.ingest(a.t.orgA, [{ name: 'o.txt', bytes: Buffer.from('stored, then the process died') }], 'never-committed');
    const [document] = await a.t.c.files.ingest(a.t.orgA, [{ name: 'kb.txt', bytes: Buffer.from('a knowledge document') }]);
    expect((await a.t.c.fileSweep.sweep())?.orphans).toBe(0);
    expect(await a.rows([orphan!.id])).toHaveLength(1);

    a.clock.offset = HOUR + 60_000;
    const r = await a.t.c.fileSweep.sweep();
    expect(r?.orphans).toBe(1);
    expect(await a.rows([orphan!.id])).toEqual([]);
    expect(a.blobExists(orphan!.id)).toBe(false);
    expect(await a.rows([document!.id])).toEqual([{ id: document!.id, task_id: null }]);
    expect(a.blobExists(document!.id)).toBe(true);
    expect(await a.metrics()).toMatch(/^agentry_files_orphaned_total 1$/m);
  });
});

describe.each(TEST_DBS)('orphan uploads and the task inbox (%s)', (kind) => {
  let a: LifetimeApp;
  beforeAll(async () => {
    // No worker: an accepted webhook task stays in the task inbox until a reader settles it.
    a = await lifetimeApp(kind, { worker: false });
  });
  afterAll(async () => a?.t.close());

  it('keeps the upload of a task still waiting in the task inbox, however old: the sweep settles the inbox first', async () => {
    const taskId = await a.webhook('queued', [{ name: 'q.txt', text: 'waiting' }]);
    const inbox = await (a.t.c.db.kysely as unknown as Kysely<any>).selectFrom('task_inbox').select('seq').execute();
    expect(inbox).toHaveLength(1);
    a.clock.offset = 2 * HOUR;
    const r = await a.t.c.fileSweep.sweep();
    expect(r?.orphans).toBe(0);
    const task = (await a.t.req('GET', `/v1/tasks/${taskId}`)).json();
    expect(await a.rows([task.input.files[0].id])).toEqual([{ id: task.input.files[0].id, task_id: taskId }]);
    expect(a.blobExists(task.input.files[0].id)).toBe(true);
  });
});

describe.each(TEST_DBS)('blob deletions that fail (%s)', (kind) => {
  const creds = { accessKeyId: 'AKTEST', secretAccessKey: 'secret', region: 'eu-west-3' };
  let s3: FakeS3;
  let a: LifetimeApp;
  beforeAll(async () => {
    s3 = await startS3Server(creds);
    a = await lifetimeApp(kind, {
      env: s3Env(s3, creds),
    });
  });
  afterAll(async () => {
    await a?.t.close();
    await s3?.close();
  });
  const object = (id: string) => s3.objects.has(`files/${a.t.orgA}/${id}`);

  it('do not fail the task delete; the blob is recorded and the file sweep removes it once the store answers', async () => {
    const task = await a.invoke('delete me', [{ name: 'x.txt', text: 'in the bucket' }]);
    await a.t.waitTask(task.id);
    const file = task.input.files[0]!;
    expect(object(file.id)).toBe(true);

    s3.failDeletes = true;
    const del = await a.t.req('DELETE', `/v1/tasks/${task.id}`);
    expect(del.statusCode, del.body).toBe(200);
    expect(await a.rows([file.id])).toEqual([]);
    expect((await a.signed(file.url)).statusCode).toBe(403);
    expect(object(file.id)).toBe(true);
    expect(await a.pendingDeletions()).toEqual([file.id]);
    expect(await a.metrics()).toMatch(/^agentry_file_blob_deletes_failed_total 1$/m);

    // Still down: the sweep tries, and keeps the record.
    expect(await a.t.c.fileSweep.sweep()).toMatchObject({ blobsRemoved: 0, blobsFailed: 1 });
    expect(await a.pendingDeletions()).toEqual([file.id]);

    s3.failDeletes = false;
    expect(await a.t.c.fileSweep.sweep()).toMatchObject({ blobsRemoved: 1, blobsFailed: 0 });
    expect(object(file.id)).toBe(false);
    expect(await a.pendingDeletions()).toEqual([]);
  });

  it('do not fail the retention sweep either', async () => {
    const task = await a.invoke('expire me', [{ name: 'y.txt', text: 'in the bucket too' }]);
    await a.t.waitTask(task.id);
    const file = task.input.files[0]!;
    s3.failDeletes = true;
    a.clock.offset = 2 * DAY;
    try {
      expect((await a.t.c.taskRetention.sweep())?.deleted).toBe(1);
    } finally {
      s3.failDeletes = false;
      a.clock.offset = 0;
    }
    expect(await a.rows([file.id])).toEqual([]);
    expect(await a.pendingDeletions()).toEqual([file.id]);
    await a.t.c.fileSweep.sweep();
    expect(object(file.id)).toBe(false);
    expect(await a.pendingDeletions()).toEqual([]);
  });
});
