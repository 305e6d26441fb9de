import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { makePdf, makeWorkbook } from '../files/builders.js';
import { createKb, serve, startDocServer, uploadFiles, waitForDocuments, type DocServer } from './kb-helpers.js';

const PAGE = `<!doctype html><html><head><title>Lighthouse handbook</title><style>p{color:red}</style><script>var x = "scriptword";</script></head>
<body><nav>Home | About</nav>
<h1>Lighthouse handbook</h1>
<h2>Lamps</h2><p>The keeper trims the wick of the lamp every evening at dusk.</p>
<h2>Schedule</h2>
<table><tr><th>Station</th><th>Keeper</th></tr><tr><td>North Point</td><td>Ada Quill</td></tr><tr><td>South Reef</td><td>Bram Stoker</td></tr></table>
</body></html>`;

describe.each(TEST_DBS)('knowledge bases API (%s)', (kind) => {
  let t: TestApp;
  let docs: DocServer;
  beforeAll(async () => {
    docs = await startDocServer();
    docs.routes.set('/handbook', serve('text/html; charset=utf-8', PAGE));
    docs.routes.set('/notes.md', serve('text/markdown', '# Notes\n\n## Tides\n\nHigh tide at the harbour comes twice a day.'));
    t = await createTestApp(kind, { env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1' } });
    await t.c.knowledgeIndexer.start();
  });
  afterAll(async () => {
    await t?.close();
    await docs?.close();
  });

  it('creates, lists, reads, updates and deletes a knowledge base', async () => {
    const created = await t.req('POST', '/v1/knowledge', { name: 'Handbooks', description: 'Keeper manuals' });
    expect(created.statusCode).toBe(201);
    const kb = created.json();
    expect(kb).toMatchObject({ name: 'Handbooks', description: 'Keeper manuals', type: 'managed', organization_id: t.orgA, agent_id: null, total_documents: 0 });
    expect(kb.id).toMatch(/^[0-9a-f-]{36}$/);

    const list = await t.req('GET', '/v1/knowledge?per_page=50');
    expect(list.json()).toMatchObject({ page: 1, per_page: 50 });
    expect(list.json().items.map((k: any) => k.id)).toContain(kb.id);

    const patched = await t.req('PATCH', `/v1/knowledge/${kb.id}`, { description: null, name: 'Manuals' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ id: kb.id, name: 'Manuals', description: null });
    expect((await t.req('GET', `/v1/knowledge/${kb.id}`)).json().name).toBe('Manuals');
    const noAgent = await t.req('PATCH', `/v1/knowledge/${kb.id}`, { agent_id: '00000000-0000-7000-8000-000000000000' });
    expect(noAgent.statusCode).toBe(422);
    expect(noAgent.json().detail[0].loc).toEqual(['body', 'agent_id']);
    // agent_id linked nothing (agents read their own knowledge_bases): refused, saying where to attach, changing nothing.
    const agent = await t.req('POST', '/v1/agents', { name: `kb owner ${kb.id.slice(-6)}` });
    const link = await t.req('PATCH', `/v1/knowledge/${kb.id}`, { agent_id: agent.json().id, name: 'Renamed' });
    expect(link.statusCode).toBe(422);
    expect(link.json().detail).toEqual([expect.objectContaining({ loc: ['body', 'agent_id'], type: 'value_error', msg: expect.stringMatching(/PATCH \/v1\/agents\/\{agent_id\} with knowledge_bases/) })]);
    expect((await t.req('GET', `/v1/knowledge/${kb.id}`)).json()).toMatchObject({ name: 'Manuals', agent_id: null });
    expect((await t.req('PATCH', `/v1/knowledge/${kb.id}`, { agent_id: null })).statusCode).toBe(200);

    const del = await t.req('DELETE', `/v1/knowledge/${kb.id}`);
    expect(del.statusCode).toBe(202);
    expect((await t.req('GET', `/v1/knowledge/${kb.id}`)).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/knowledge/${kb.id}`)).json()).toEqual({ detail: 'Knowledge base not found' });
  });

  it('refuses bad input with 422 and changes nothing', async () => {
    const missing = await t.req('POST', '/v1/knowledge', { description: 'x' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'missing' });
    const extra = await t.req('POST', '/v1/knowledge', { name: 'x', id: 'mine' });
    expect(extra.json().detail[0]).toMatchObject({ loc: ['body', 'id'], type: 'extra_forbidden' });

    const kbId = await createKb(t, 'Validation');
    const before = (await t.req('GET', '/v1/knowledge?per_page=50')).json().total;
    expect((await t.req('PATCH', `/v1/knowledge/${kbId}`, { type: 'external' })).statusCode).toBe(422);
    const urls = await t.req('POST', `/v1/knowledge/${kbId}/documents`, { document_urls: ['ftp://example.com/a.pdf', 'not a url'] });
    expect(urls.statusCode).toBe(422);
    expect(urls.json().detail.map((d: any) => d.loc)).toEqual([
      ['body', 'document_urls', 0],
      ['body', 'document_urls', 1],
    ]);
    expect((await t.req('POST', `/v1/knowledge/${kbId}/documents`, { document_urls: [] })).statusCode).toBe(422);
    const noBody = await t.req('POST', `/v1/knowledge/${kbId}/documents`);
    expect(noBody.json().detail).toEqual([{ loc: ['body', 'document_urls'], msg: 'Field required', type: 'missing' }]);
    expect((await t.req('POST', `/v1/knowledge/${kbId}/documents`, '{"document_urls": [')).json().detail[0].type).toBe('json_invalid');
    const search = await t.req('GET', `/v1/knowledge/${kbId}/search?top_k=0`);
    expect(search.statusCode).toBe(422);
    expect(search.json().detail.map((d: any) => d.loc)).toEqual([
      ['query', 'search_query'],
      ['query', 'top_k'],
    ]);
    expect((await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=x&top_k=51`)).statusCode).toBe(422);

    const binary = await uploadFiles(t, kbId, [{ name: 'tool.exe', content: Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 4, 0]) }]);
    expect(binary.statusCode).toBe(415);
    expect(binary.json().detail).toContain("'tool.exe'");
    const fake = await uploadFiles(t, kbId, [
      { name: 'ok.md', content: '# fine' },
      { name: 'report.pdf', content: 'not really a pdf' },
    ]);
    expect(fake.statusCode).toBe(415);
    expect((await t.req('GET', `/v1/knowledge/${kbId}/documents`)).json().total).toBe(0);
    expect((await t.req('GET', '/v1/knowledge?per_page=50')).json().total).toBe(before);
  });

  it("answers another organization's knowledge base, documents and search exactly like missing ones", async () => {
    const kbId = await createKb(t, 'Private');
    const up = await uploadFiles(t, kbId, [{ name: 'secret.md', content: '# Secret\n\nThe vault code is swordfish.' }]);
    const docId = up.json()[0].id;
    const asB = { 'x-api-key': t.keyB };
    for (const [method, url] of [
      ['GET', `/v1/knowledge/${kbId}`],
      ['PATCH', `/v1/knowledge/${kbId}`],
      ['DELETE', `/v1/knowledge/${kbId}`],
      ['GET', `/v1/knowledge/${kbId}/documents`],
      ['POST', `/v1/knowledge/${kbId}/documents`],
      ['GET', `/v1/knowledge/${kbId}/documents/${docId}`],
      ['DELETE', `/v1/knowledge/${kbId}/documents/${docId}`],
      ['GET', `/v1/knowledge/${kbId}/search?search_query=vault`],
    ] as const) {
      const body = method === 'PATCH' ? { name: 'stolen' } : method === 'POST' ? { document_urls: ['https://example.com/x'] } : undefined;
      const r = await t.req(method, url, body, asB);
      expect(r.statusCode, `${method} ${url}`).toBe(404);
      expect(r.json()).toEqual({ detail: 'Knowledge base not found' });
    }
    expect((await t.req('GET', '/v1/knowledge', undefined, asB)).json().items.map((k: any) => k.id)).not.toContain(kbId);
    expect((await t.req('GET', '/v1/knowledge/not-a-uuid')).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/knowledge/${kbId}/documents/${kbId}`)).json()).toEqual({ detail: 'Document not found' });
    await waitForDocuments(t, kbId);
    expect((await t.req('GET', `/v1/knowledge/${kbId}`)).json().total_documents).toBe(1);
  });

  it('fetches URL documents under the egress policy, keeps their structure, and reports failures with a reason', async () => {
    const kbId = await createKb(t, 'Web');
    const refused = 'http://169.254.169.254/latest/meta-data';
    const r = await t.req('POST', `/v1/knowledge/${kbId}/documents`, {
      document_urls: [`${docs.url}/handbook`, `${docs.url}/notes.md`, `${docs.url}/missing.pdf`, refused],
    });
    expect(r.statusCode).toBe(201);
    const added = r.json();
    expect(added).toHaveLength(4);
    expect(added[0]).toMatchObject({ kb_id: kbId, document_url: `${docs.url}/handbook`, status: 'queued', organization_id: t.orgA });

    const final = await waitForDocuments(t, kbId);
    const byUrl = new Map(final.map((d) => [d.document_url, d]));
    expect(byUrl.get(`${docs.url}/handbook`)).toMatchObject({ status: 'ready', status_reason: null, mime_type: 'text/html' });
    expect(byUrl.get(`${docs.url}/notes.md`)).toMatchObject({ status: 'ready' });
    expect(byUrl.get(`${docs.url}/missing.pdf`)).toMatchObject({ status: 'error', status_reason: 'Fetching the document answered HTTP 404' });
    const refusedDoc = byUrl.get(refused);
    expect(refusedDoc.status).toBe('error');
    expect(refusedDoc.status_reason).toMatch(/refused: 169\.254\.169\.254 is a private, loopback or link-local address/);

    const page = await t.req('GET', `/v1/knowledge/${kbId}/documents/${byUrl.get(`${docs.url}/handbook`).id}`);
    const text: string = page.json().raw_data;
    expect(text).toContain('## Lamps');
    expect(text).toContain('| South Reef | Bram Stoker |');
    expect(text).not.toContain('scriptword');
    expect(text).not.toContain('color:red');

    const hits = (await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=${encodeURIComponent('who keeps South Reef station?')}`)).json();
    expect(hits[0].content).toContain('| South Reef | Bram Stoker |');
    // A table chunk keeps its header row, so the row is never read without its column names.
    expect(hits[0].content).toContain('| Station | Keeper |');
    expect(hits[0]).toEqual({ content: hits[0].content, score: 1, document_id: byUrl.get(`${docs.url}/handbook`).id });
    expect((await t.req('GET', `/v1/knowledge/${kbId}`)).json().total_documents).toBe(2);
  });

  it('indexes uploads, searches them with scores, and forgets deleted documents', async () => {
    const kbId = await createKb(t, 'Uploads');
    const up = await uploadFiles(t, kbId, [
      { name: 'tides.txt', content: 'Tide tables for the harbour.\n\nSpring tides follow the full moon.' },
      { name: 'crew.csv', content: 'name,role\nAda,keeper\nBram,cook\n' },
    ]);
    expect(up.statusCode).toBe(201);
    expect(up.json().map((d: any) => [d.name, d.status, d.source])).toEqual([
      ['tides.txt', 'queued', 'file'],
      ['crew.csv', 'queued', 'file'],
    ]);
    expect(up.json()[0].document_url).toMatch(/\/v1\/files\/[0-9a-f-]{36}\?expires=\d+&sig=/);
    const ready = await waitForDocuments(t, kbId);
    expect(ready.every((d) => d.status === 'ready' && d.chunks_count > 0)).toBe(true);

    const hits = (await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=full%20moon%20spring%20tides&top_k=1`)).json();
    expect(hits).toHaveLength(1);
    expect(hits[0].content).toContain('Spring tides follow the full moon.');
    expect(hits[0].score).toBeGreaterThan(0);
    const cook = (await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=cook`)).json();
    expect(cook[0].content).toBe('name,role\nAda,keeper\nBram,cook');

    const tides = ready.find((d) => d.name === 'tides.txt');
    expect((await t.req('DELETE', `/v1/knowledge/${kbId}/documents/${tides.id}`)).statusCode).toBe(202);
    expect((await t.req('GET', `/v1/knowledge/${kbId}/documents/${tides.id}`)).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=tides`)).json()).toEqual([]);
    // The stored upload went with it.
    expect((await t.req('GET', `/v1/files/${tides.document_url.split('/v1/files/')[1].split('?')[0]}`)).statusCode).toBe(404);
  });

  it('reads binary documents through the files pipeline: a PDF by URL without extension, a spreadsheet upload', async () => {
    docs.routes.set('/download?id=7', serve('application/pdf', makePdf('Quarterly lamp oil consumption fell by a third.')));
    const kbId = await createKb(t, 'Binary');
    expect((await t.req('POST', `/v1/knowledge/${kbId}/documents`, { document_urls: [`${docs.url}/download?id=7`] })).statusCode).toBe(201);
    const sheet = makeWorkbook(
      [
        ['station', 'lamp'],
        ['North Point', 'Fresnel first order'],
      ],
      'xlsx',
    );
    expect((await uploadFiles(t, kbId, [{ name: 'lamps.xlsx', content: sheet }])).statusCode).toBe(201);
    const ready = await waitForDocuments(t, kbId);
    expect(ready.map((d) => [d.mime_type, d.status])).toEqual([
      ['application/pdf', 'ready'],
      ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'ready'],
    ]);
    expect((await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=lamp%20oil`)).json()[0].content).toContain('lamp oil consumption fell');
    const fresnel = (await t.req('GET', `/v1/knowledge/${kbId}/search?search_query=fresnel`)).json();
    expect(fresnel[0].content).toBe('station,lamp\nNorth Point,Fresnel first order');
  });
});
