import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileDisposal } from '../../src/files/file-disposal.js';
import { FilesService } from '../../src/files/files.service.js';
import { KnowledgeRepository } from '../../src/knowledge/knowledge.repository.js';
import { s3Env, startS3Server, type FakeS3 } from '../fakes/s3-server.js';
import { createKb, uploadFiles } from '../knowledge/kb-helpers.js';
import { TEST_DBS } from '../support/harness.js';
import { HOUR, lifetimeApp, type LifetimeApp } from './lifetime-app.js';

/** The uploaded file behind a document (its id is the last segment of the presigned URL's path). */
const fileOf = (doc: { document_url: string }) => new URL(doc.document_url).pathname.split('/').pop()!;

/** What a process that dies at that point would leave: nothing after it runs. */
const theProcessDies = () => Promise.reject(new Error('the process died'));

/** Makes every write of a released blob's record fail, in the app's database (undone by the returned function). */
async function failBlobReleases(a: LifetimeApp, kind: 'sqlite' | 'postgres'): Promise<() => Promise<void>> {
  if (kind === 'sqlite') {
    await sql`create trigger fail_release before insert on file_blob_deletions begin select raise(abort, 'injected failure'); end`.execute(a.k);
    return async () => void (await sql`drop trigger fail_release`.execute(a.k));
  }
  await sql`create function fail_release() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(a.k);
  await sql`create trigger fail_release before insert on file_blob_deletions for each row execute function fail_release()`.execute(a.k);
  return async () => {
    await sql`drop trigger fail_release on file_blob_deletions`.execute(a.k);
    await sql`drop function fail_release()`.execute(a.k);
  };
}

describe.each(TEST_DBS)("knowledge documents' files go with their documents (%s)", (kind) => {
  const creds = { accessKeyId: 'AKTEST', secretAccessKey: 'secret', region: 'eu-west-3' };
  let s3: FakeS3;
  let a: LifetimeApp;
  beforeAll(async () => {
    s3 = await startS3Server(creds);
    // No worker: nothing indexes or sweeps but what a test calls.
    a = await lifetimeApp(kind, {
      worker: false,
      env: s3Env(s3, creds),
    });
  });
  afterAll(async () => {
    await a?.t.close();
    await s3?.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    s3.failDeletes = false;
    a.clock.offset = 0;
  });
  const object = (id: string) => s3.objects.has(`files/${a.t.orgA}/${id}`);
  const upload = async (kb: string, names: string[]) => {
    const r = await uploadFiles(a.t, kb, names.map((name) => ({ name, content: `# ${name}\n\nthe text of ${name}` })));
    expect(r.statusCode, r.body).toBe(201);
    return (r.json() as { id: string; document_url: string }[]).map((d) => ({ id: d.id, file: fileOf(d) }));
  };
  const filesNamed = async (name: string) =>
    (await a.k.selectFrom('files').select('id').where('organization_id', '=', a.t.orgA).where('name', '=', name).execute()).map((r) => r.id as string);

  it('a document delete deletes its file in its own transaction: a process that dies right after the commit leaves no file row, and the blob recorded for the sweep', async () => {
    const kb = await createKb(a.t, 'dies after the commit');
    const [one, two] = await upload(kb, ['one.md', 'two.md']);
    expect(object(one!.file)).toBe(true);

    vi.spyOn(FilesService.prototype, 'discard').mockImplementation(theProcessDies);
    vi.spyOn(FileDisposal.prototype, 'removeBlobs').mockImplementation(theProcessDies);
    await a.t.req('DELETE', `/v1/knowledge/${kb}/documents/${one!.id}`);
    vi.restoreAllMocks();

    expect((await a.t.req('GET', `/v1/knowledge/${kb}/documents/${one!.id}`)).statusCode).toBe(404);
    expect(await a.rows([one!.file])).toEqual([]);
    expect(await a.pendingDeletions()).toEqual([one!.file]);
    expect(object(one!.file)).toBe(true);
    expect(await a.t.c.fileSweep.sweep()).toMatchObject({ orphans: 0, blobsFailed: 0 });
    expect(object(one!.file)).toBe(false);
    expect(await a.pendingDeletions()).toEqual([]);
    // The other document keeps its file.
    expect(await a.rows([two!.file])).toHaveLength(1);
    expect(object(two!.file)).toBe(true);
  });

  it('a knowledge base delete deletes every file of its documents in its own transaction, likewise', async () => {
    const kb = await createKb(a.t, 'dies after the commit too');
    const docs = await upload(kb, ['a.md', 'b.md']);
    const files = docs.map((d) => d.file).sort();

    vi.spyOn(FilesService.prototype, 'discard').mockImplementation(theProcessDies);
    vi.spyOn(FileDisposal.prototype, 'removeBlobs').mockImplementation(theProcessDies);
    await a.t.req('DELETE', `/v1/knowledge/${kb}`);
    vi.restoreAllMocks();

    expect((await a.t.req('GET', `/v1/knowledge/${kb}`)).statusCode).toBe(404);
    expect(await a.rows(files)).toEqual([]);
    expect((await a.pendingDeletions()).sort()).toEqual(files);
    await a.t.c.fileSweep.sweep();
    for (const f of files) expect(object(f)).toBe(false);
    expect(await a.pendingDeletions()).toEqual([]);
  });

  it('a store that refuses the deletes does not fail a knowledge base delete: the blobs stay recorded until the sweep removes them', async () => {
    const kb = await createKb(a.t, 'store refuses');
    const files = (await upload(kb, ['c.md', 'd.md'])).map((d) => d.file).sort();

    s3.failDeletes = true;
    expect((await a.t.req('DELETE', `/v1/knowledge/${kb}`)).statusCode).toBe(202);
    expect(await a.rows(files)).toEqual([]);
    expect((await a.pendingDeletions()).sort()).toEqual(files);
    for (const f of files) expect(object(f)).toBe(true);
    expect(await a.t.c.fileSweep.sweep()).toMatchObject({ blobsRemoved: 0, blobsFailed: 2 });

    s3.failDeletes = false;
    expect(await a.t.c.fileSweep.sweep()).toMatchObject({ blobsRemoved: 2, blobsFailed: 0 });
    for (const f of files) expect(object(f)).toBe(false);
    expect(await a.pendingDeletions()).toEqual([]);
  });

  it('a failure while the files are released undoes the whole delete: the knowledge base, its documents, file rows and blobs stay', async () => {
    const kb = await createKb(a.t, 'release fails');
    const [doc] = await upload(kb, ['kept.md']);

    const undo = await failBlobReleases(a, kind);
    try {
      expect((await a.t.req('DELETE', `/v1/knowledge/${kb}`)).statusCode).toBe(500);
      expect((await a.t.req('DELETE', `/v1/knowledge/${kb}/documents/${doc!.id}`)).statusCode).toBe(500);
    } finally {
      await undo();
    }
    expect((await a.t.req('GET', `/v1/knowledge/${kb}/documents/${doc!.id}`)).statusCode).toBe(200);
    expect(await a.rows([doc!.file])).toHaveLength(1);
    expect(object(doc!.file)).toBe(true);
    expect(await a.pendingDeletions()).toEqual([]);

    expect((await a.t.req('DELETE', `/v1/knowledge/${kb}`)).statusCode).toBe(202);
    expect(await a.rows([doc!.file])).toEqual([]);
    expect(object(doc!.file)).toBe(false);
  });

  it('an upload whose documents never committed is deleted by the file sweep an hour later; document files and files of no holder stay', async () => {
    const kb = await createKb(a.t, 'orphans');
    const [kept] = await upload(kb, ['kept-doc.md']);
    const [unattributed] = await a.t.c.files.ingest(a.t.orgA, [{ name: 'unattributed.txt', bytes: Buffer.from('stored before uploads had holders') }]);

    // The process dies between storing the files and committing their documents, so it never discards them.
    vi.spyOn(KnowledgeRepository.prototype, 'insertDocuments').mockImplementation(theProcessDies);
    vi.spyOn(FilesService.prototype, 'discard').mockImplementation(theProcessDies);
    expect((await uploadFiles(a.t, kb, [{ name: 'lost.md', content: '# Lost' }])).statusCode).toBe(500);
    vi.restoreAllMocks();
    const lost = await filesNamed('lost.md');
    expect(lost).toHaveLength(1);
    expect(object(lost[0]!)).toBe(true);

    expect((await a.t.c.fileSweep.sweep())?.orphans).toBe(0);
    expect(await a.rows(lost)).toHaveLength(1);
    a.clock.offset = HOUR + 60_000;
    expect((await a.t.c.fileSweep.sweep())?.orphans).toBe(1);
    expect(await a.rows(lost)).toEqual([]);
    expect(object(lost[0]!)).toBe(false);
    expect((await a.rows([kept!.file, unattributed!.id])).map((r) => r.id).sort()).toEqual([kept!.file, unattributed!.id].sort());
    expect(object(kept!.file)).toBe(true);
  });

  it('documents are never committed into a knowledge base deleted meanwhile: the upload is a 404 and its files go', async () => {
    const kb = await createKb(a.t, 'deleted meanwhile');
    const objects = s3.objects.size;
    const store = FilesService.prototype.store;
    vi.spyOn(FilesService.prototype, 'store').mockImplementationOnce(async function (this: FilesService, ...args: Parameters<FilesService['store']>) {
      const stored = await store.apply(this, args);
      expect((await a.t.req('DELETE', `/v1/knowledge/${kb}`)).statusCode).toBe(202);
      return stored;
    });
    const r = await uploadFiles(a.t, kb, [{ name: 'late.md', content: '# Late' }]);
    expect(r.statusCode, r.body).toBe(404);
    expect(r.json()).toEqual({ detail: 'Knowledge base not found' });
    expect(await a.k.selectFrom('kb_documents').select('id').where('kb_id', '=', kb).execute()).toEqual([]);
    expect(await filesNamed('late.md')).toEqual([]);
    expect(s3.objects.size).toBe(objects);
    expect(await a.pendingDeletions()).toEqual([]);
  });
});
