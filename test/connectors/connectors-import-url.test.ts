import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { PETSTORE } from '../console/petstore.fixture.js';

/** POST /v1/connectors/import_url: the server fetches the document under the egress policy, with a size cap. */
describe.each(TEST_DBS)('connector import by URL (%s)', (kind) => {
  let t: TestApp;
  let closed: TestApp;
  let upstream: UpstreamApi;
  beforeAll(async () => {
    upstream = await startUpstreamApi();
    [t, closed] = await Promise.all([
      createTestApp(kind, { env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1', AGENTRY_MAX_FILE_BYTES: '20000' } }),
      createTestApp(kind),
    ]);
    upstream.on('GET', '/openapi.json', () => ({ json: PETSTORE }));
    upstream.on('GET', '/not-openapi.json', () => ({ json: { hello: 'world' } }));
    upstream.on('GET', '/huge.json', () => ({ text: JSON.stringify({ ...PETSTORE, info: { ...PETSTORE.info, description: 'x'.repeat(30_000) } }) }));
    upstream.on('GET', '/gone.json', () => ({ status: 404, json: { detail: 'no' } }));
  });
  afterAll(async () => {
    await t?.close();
    await closed?.close();
    await upstream?.close();
  });

  const count = async (app: TestApp) => (await app.req('GET', '/v1/connectors')).json().total as number;

  it('imports the fetched document like an uploaded one', async () => {
    const r = await t.req('POST', '/v1/connectors/import_url', { name: 'Pets by URL', url: `${upstream.url}/openapi.json` });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ name: 'Pets by URL', total_operations: 2, version: '1.2.0', server_url: 'https://pets.example.com/v1' });
    const ops = (await t.req('GET', `/v1/tools/connectors/${r.json().id}/operations`)).json() as { operationId: string }[];
    expect(ops.map((o) => o.operationId).sort()).toEqual(['createPet', 'getPet']);
  });

  it('answers 422 on url for what the caller can fix, and creates nothing', async () => {
    const before = await count(t);
    const cases: [string, RegExp][] = [
      [`${upstream.url}/not-openapi.json`, /Invalid OpenAPI document/],
      [`${upstream.url}/huge.json`, /larger than the limit of 20000 bytes/],
      [`${upstream.url}/gone.json`, /HTTP 404/],
      ['ftp://example.com/openapi.json', /valid http or https URL/],
    ];
    for (const [url, msg] of cases) {
      const r = await t.req('POST', '/v1/connectors/import_url', { name: 'bad', url });
      expect(r.statusCode, url).toBe(422);
      expect(r.json().detail[0].loc).toEqual(['body', 'url']);
      expect(r.json().detail[0].msg).toMatch(msg);
    }
    expect(await count(t)).toBe(before);
  });

  it('refuses addresses the egress policy forbids (127.0.0.1 by default)', async () => {
    const r = await closed.req('POST', '/v1/connectors/import_url', { name: 'internal', url: `${upstream.url}/openapi.json` });
    expect(r.statusCode).toBe(422);
    expect(r.json().detail[0].loc).toEqual(['body', 'url']);
    expect(await count(closed)).toBe(0);
    expect(upstream.received('GET', '/openapi.json')).toHaveLength(1);
  });
});
