import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync, crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSigner } from '../../src/files/file-signer.js';
import { FilesRepository } from '../../src/files/files.repository.js';
import { parseMasterKey } from '../../src/lib/secret-box.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import * as b from './builders.js';
import { everyAcceptedType } from './builders.js';

describe('file typing and extraction', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  it.each(everyAcceptedType())('extracts the text of $name', async (f) => {
    const [prepared] = await t.c.files.prepare(t.orgA, [{ name: f.name, bytes: f.bytes }]);
    expect(prepared!.text).toContain(f.word);
  });

  it('reads SVG text nodes only, not styles', async () => {
    const [p] = await t.c.files.prepare(t.orgA, [everyAcceptedType().find((f) => f.name.endsWith('.svg'))!]);
    expect(p!.text).toBe('The KOALA');
  });

  it('reads ZIP entries recursively and lists the ones it cannot read', async () => {
    const zip = b.makeZip({
      'a.txt': 'first ANT',
      'prog.exe': b.makeExe(),
      'inner.zip': b.makeZip({ 'deep.docx': b.makeDocx('nested BEE') }),
    });
    const [p] = await t.c.files.prepare(t.orgA, [{ name: 'x.zip', bytes: zip }]);
    expect(p!.text).toContain('first ANT');
    expect(p!.text).toContain('nested BEE');
    expect(p!.text).toContain('prog.exe (skipped: not an accepted file type)');
  });

  it.each([
    ['invoice.pdf', b.makeExe()],
    ['notes.txt', b.makeExe()],
    ['photo.png', b.makeExe()],
    ['setup.exe', b.makeExe()],
    ['noextension', b.makeExe()],
    ['scan.pdf', b.fixture('ocr.png')],
    ['report.docx', b.makeZip({ 'a.txt': 'a plain zip is not a Word document' })],
    ['memo.doc', b.makeWorkbook([['a']], 'biff8')],
    ['page.html', Buffer.from('<html>hi</html>')],
    ['picture.svg', Buffer.from('just text, no svg element')],
  ])('refuses %s when content and name disagree or the type is not accepted (415 naming the file)', async (name, bytes) => {
    const err = await t.c.files.prepare(t.orgA, [{ name, bytes }]).catch((e) => e);
    expect(err.status).toBe(415);
    expect(err.message).toContain(`'${name}'`);
  });

  it('types a file without an extension by its content', async () => {
    const [p] = await t.c.files.prepare(t.orgA, [{ name: 'upload', bytes: b.makePdf('no extension NEWT') }]);
    expect(p!.kind).toBe('pdf');
    expect(p!.text).toContain('NEWT');
  });

  it('refuses a zip bomb, a too deep nesting and too many entries with 413', async () => {
    for (const [name, bytes, reason] of [
      ['bomb.zip', b.makeZipBomb(), 'size'],
      ['deep.zip', b.makeNestedZip(5, 'x'), 'depth'],
      ['many.zip', b.makeZip(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}.txt`, 'x']))), 'entries'],
    ] as const) {
      const err = await t.c.files.prepare(t.orgA, [{ name, bytes }]).catch((e) => e);
      expect(err.status, name).toBe(413);
      expect(err.message).toContain(`'${name}'`);
      expect(err.message).toContain(reason);
    }
  });

  it('never inflates an entry past the size it declares', async () => {
    const real = Buffer.alloc(1024 * 1024, 'a');
    const zip = b.writeRawZip([{ name: 'liar.txt', data: deflateRawSync(real), crc: crc32(real), declaredSize: 10 }]);
    const [p] = await t.c.files.prepare(t.orgA, [{ name: 'liar.zip', bytes: zip }]);
    expect(p!.text).toContain('aaaaaaaaaa');
    expect(p!.text.length).toBeLessThan(100);
  });
});

describe('file size limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { env: { AGENTRY_MAX_FILE_BYTES: '1000', AGENTRY_MAX_REQUEST_BYTES: '1500' } });
  });
  afterAll(async () => t?.close());

  it('refuses a file over the per-file limit and a request over the per-request limit (413)', async () => {
    const big = await t.c.files.prepare(t.orgA, [{ name: 'big.txt', bytes: Buffer.alloc(1001, 'a') }]).catch((e) => e);
    expect(big.status).toBe(413);
    expect(big.message).toContain("'big.txt'");
    const two = await t.c.files
      .prepare(t.orgA, [
        { name: 'a.txt', bytes: Buffer.alloc(800, 'a') },
        { name: 'b.txt', bytes: Buffer.alloc(800, 'b') },
      ])
      .catch((e) => e);
    expect(two.status).toBe(413);
  });
});

describe.each(TEST_DBS)('stored files and presigned URLs (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  const fetchUrl = (url: string, headers: Record<string, string> = {}) => {
    const u = new URL(url);
    return t.app.inject({ method: 'GET', url: u.pathname + u.search, headers });
  };

  it('stores a file and serves it at its presigned URL without a key', async () => {
    const pdf = b.makePdf('stored PUFFIN');
    const [f] = await t.c.files.ingest(t.orgA, [{ name: 'p.pdf', bytes: pdf }]);
    expect(f!.url).toMatch(new RegExp(`^${t.c.urls.api}/v1/files/${f!.id}\\?expires=\\d+&sig=[A-Za-z0-9_-]+$`));
    const expires = Number(new URL(f!.url).searchParams.get('expires'));
    // valid 30 days after upload
    expect(Math.abs(expires * 1000 - (f!.createdAt + 30 * 86_400_000))).toBeLessThan(1000);
    const r = await fetchUrl(f!.url);
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('application/pdf');
    expect(r.rawPayload.equals(pdf)).toBe(true);
    expect(t.c.files.toTaskFile(f!)).toMatchObject({ id: f!.id, name: 'p.pdf', mime_type: 'application/pdf', size: pdf.length, url: f!.url });
    expect(t.c.files.toTaskFile(f!).text).toContain('PUFFIN');
  });

  it('refuses a tampered, moved or expired signature with 403, and no signature without a key with 401', async () => {
    const [f] = await t.c.files.ingest(t.orgA, [{ name: 'a.txt', bytes: Buffer.from('hello') }]);
    const [g] = await t.c.files.ingest(t.orgB, [{ name: 'b.txt', bytes: Buffer.from('other org') }]);
    const u = new URL(f!.url);
    const sig = u.searchParams.get('sig')!;
    const expires = Number(u.searchParams.get('expires'));
    const tamperedSig = `${u.pathname}?expires=${expires}&sig=${sig.slice(0, -2)}AA`;
    const extended = `${u.pathname}?expires=${expires + 86_400}&sig=${sig}`;
    const moved = `/v1/files/${g!.id}?expires=${expires}&sig=${sig}`;
    const signer = new FileSigner(parseMasterKey('a'.repeat(64)));
    const past = Math.floor(Date.now() / 1000) - 60;
    const expired = `${u.pathname}?expires=${past}&sig=${signer.sign(t.orgA, f!.id, past)}`;
    for (const url of [tamperedSig, extended, moved, expired]) {
      const r = await t.app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(403);
      expect(r.json()).toEqual({ detail: 'Invalid or expired file signature' });
    }
    expect((await t.app.inject({ method: 'GET', url: u.pathname })).statusCode).toBe(401);
  });

  it('serves a file to its organization key and 404s another organization', async () => {
    const [f] = await t.c.files.ingest(t.orgA, [{ name: 'a.txt', bytes: Buffer.from('mine') }]);
    expect((await t.req('GET', `/v1/files/${f!.id}`)).body).toBe('mine');
    const other = await t.app.inject({ method: 'GET', url: `/v1/files/${f!.id}`, headers: { 'x-api-key': t.keyB } });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ detail: 'File not found' });
  });

  it('serves uploaded SVG so that a browser cannot run it', async () => {
    const [f] = await t.c.files.ingest(t.orgA, [{ name: 'x.svg', bytes: Buffer.from('<svg><script>alert(1)</script><text>x</text></svg>') }]);
    const r = await fetchUrl(f!.url);
    expect(r.headers['content-security-policy']).toContain('sandbox');
    expect(r.headers['content-disposition']).toMatch(/^attachment/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
  });

  it('stores nothing for a refused request, and discard removes stored files', async () => {
    const repo = new FilesRepository(t.c.db);
    const before = await repo.count(t.orgA);
    const refused = t.c.files.ingest(t.orgA, [
      { name: 'ok.txt', bytes: Buffer.from('fine') },
      { name: 'evil.pdf', bytes: b.makeExe() },
    ]);
    await expect(refused).rejects.toMatchObject({ status: 415 });
    expect(await repo.count(t.orgA)).toBe(before);
    const stored = await t.c.files.ingest(t.orgA, [{ name: 'gone.txt', bytes: Buffer.from('bye') }]);
    const dir = join(t.testEnv.dataDir, 'files', t.orgA);
    expect(existsSync(join(dir, stored[0]!.id))).toBe(true);
    await t.c.files.discard(t.orgA, stored);
    expect(await repo.count(t.orgA)).toBe(before);
    expect(readdirSync(dir)).not.toContain(stored[0]!.id);
    expect((await fetchUrl(stored[0]!.url)).statusCode).toBe(403);
  });
});
