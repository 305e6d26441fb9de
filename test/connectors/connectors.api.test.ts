import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), '../../../shared/openapi-corpus');
const corpus = (name: string) => readFileSync(join(CORPUS, name), 'utf8');

/** A small 3.0 document with the features the schema endpoint must get right. */
const PETS = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1.2.3' },
  servers: [{ url: 'https://pets.example.com/{base}', variables: { base: { default: 'v1' } } }],
  paths: {
    '/pets/{petId}': {
      parameters: [
        { name: 'petId', in: 'path', required: true, schema: { type: 'integer' }, description: 'path level' },
        { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
      ],
      get: {
        operationId: 'getPet',
        summary: 'Get a pet',
        tags: ['pets'],
        parameters: [
          { name: 'verbose', in: 'query', required: true, schema: { type: 'string', enum: ['yes', 'no'] }, description: 'operation wins' },
          { $ref: '#/components/parameters/Trace' },
        ],
        responses: {
          '404': { description: 'nope', content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'string' } } } } } },
          '201': { description: 'not json', content: { 'text/plain': { schema: { type: 'string' } } } },
          '200': { $ref: '#/components/responses/PetResponse' },
        },
      },
      put: {
        summary: 'Replace a pet',
        requestBody: {
          required: true,
          content: {
            'application/xml': { schema: { type: 'string' } },
            'application/json': { schema: { $ref: '#/components/schemas/Pet' } },
          },
        },
        responses: { '204': { description: 'done' } },
      },
    },
    '/tree': {
      post: {
        operationId: 'postTree',
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } } },
      },
    },
  },
  components: {
    parameters: { Trace: { name: 'X-Trace', in: 'header', schema: { type: 'string' } } },
    responses: { PetResponse: { description: 'a pet', content: { 'application/json; charset=utf-8': { schema: { $ref: '#/components/schemas/Pet' } } } } },
    schemas: {
      Pet: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', nullable: true },
          owner: { $ref: '#/components/schemas/Owner' },
          kind: { oneOf: [{ $ref: '#/components/schemas/Cat' }, { $ref: '#/components/schemas/Dog' }], discriminator: { propertyName: 'type', mapping: { cat: '#/components/schemas/Cat' } } },
        },
      },
      Owner: { type: 'object', description: 'The owner', properties: { email: { type: 'string', format: 'email' } } },
      Cat: { type: 'object', properties: { type: { type: 'string' }, meows: { type: 'boolean' } } },
      Dog: { allOf: [{ $ref: '#/components/schemas/Cat' }, { type: 'object', properties: { barks: { type: 'boolean' } } }] },
      Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } },
    },
  },
};

function refsIn(node: unknown, path = ''): string[] {
  if (!node || typeof node !== 'object') return [];
  if (Array.isArray(node)) return node.flatMap((n, i) => refsIn(n, `${path}/${i}`));
  return Object.entries(node).flatMap(([k, v]) => (k === '$ref' ? [path] : []).concat(refsIn(v, `${path}/${k}`)));
}

describe.each(TEST_DBS)('connectors API (%s)', (kind) => {
  let t: TestApp;
  let connectorId: string;
  let connectionId: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    const r = await t.req('POST', '/v1/connectors', { name: 'pets', description: 'Pet store', openapi: PETS });
    expect(r.statusCode).toBe(201);
    connectorId = r.json().id;
    const c = await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'prod', security: { type: 'bearer', token: 'sekret-token' }, headers: { 'X-Custom': 'hidden' } });
    expect(c.statusCode).toBe(201);
    connectionId = c.json().id;
  });
  afterAll(async () => t?.close());

  it('imports a document and shows it', async () => {
    const r = await t.req('GET', `/v1/connectors/${connectorId}`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ id: connectorId, name: 'pets', description: 'Pet store', version: '1.2.3', total_operations: 3, server_url: 'https://pets.example.com/v1' });
    expect(r.json().created_at).toMatch(/\+00:00$/);
    const list = await t.req('GET', '/v1/connectors?per_page=1');
    expect(list.json()).toMatchObject({ total: 1, page: 1, per_page: 1, total_pages: 1 });
    expect(list.json().items[0].id).toBe(connectorId);
  });

  it('accepts JSON text, YAML text and a multipart file; the same document gets the same catalog ids', async () => {
    const asJson = await t.req('POST', '/v1/connectors', { name: 'json', openapi: JSON.stringify(PETS) });
    const yaml = corpus('oai-examples__v2.0__petstore-expanded.yaml');
    const asYaml = await t.req('POST', '/v1/connectors', { name: 'yaml', openapi: yaml });
    expect(asJson.statusCode).toBe(201);
    expect(asYaml.statusCode).toBe(201);
    expect(asYaml.json()).toMatchObject({ total_operations: 4, openapi_version: '2.0', server_url: 'http://petstore.swagger.io/api' });

    const boundary = '----agentry';
    const payload =
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nuploaded\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="petstore.yaml"\r\nContent-Type: application/yaml\r\n\r\n${yaml}\r\n--${boundary}--\r\n`;
    const up = await t.app.inject({ method: 'POST', url: '/v1/connectors', payload, headers: { 'x-api-key': t.keyA, 'content-type': `multipart/form-data; boundary=${boundary}` } });
    expect(up.statusCode).toBe(201);
    expect(up.json()).toMatchObject({ name: 'uploaded', total_operations: 4 });

    const ops = async (id: string) => (await t.req('GET', `/v1/tools/connectors/${id}/operations`)).json() as { id: string; operationId: string }[];
    const [a, b, c] = [await ops(connectorId), await ops(asJson.json().id), await ops(up.json().id)];
    expect(b).toEqual(a);
    expect((await ops(asYaml.json().id)).map((o) => o.id)).toEqual(c.map((o) => o.id));
  });

  it('refuses invalid documents with the reason and creates nothing', async () => {
    const before = (await t.req('GET', '/v1/connectors')).json().total;
    for (const openapi of ['not: [valid', { openapi: '3.0.0', paths: {} }, { swagger: '1.2' }, '']) {
      const r = await t.req('POST', '/v1/connectors', { name: 'bad', openapi });
      expect(r.statusCode).toBe(422);
      expect(r.json().detail[0].loc).toEqual(['body', 'openapi']);
      expect(r.json().detail[0].msg).toMatch(/Invalid OpenAPI document|String should have/);
    }
    const missing = await t.req('POST', '/v1/connectors', { openapi: PETS, extra: 1 });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc: ['body', 'name'], type: 'missing' }), expect.objectContaining({ loc: ['body', 'extra'], type: 'extra_forbidden' })]),
    );
    expect((await t.req('GET', '/v1/connectors')).json().total).toBe(before);
  });

  it('lists and searches operations; generates operationIds', async () => {
    const r = await t.req('GET', `/v1/tools/connectors/${connectorId}/operations`);
    expect(r.statusCode).toBe(200);
    const ops = r.json();
    expect(ops.map((o: { operationId: string }) => o.operationId)).toEqual(['getPet', 'put_pets_petId', 'postTree']);
    expect(ops[0]).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), operationId: 'getPet', path: '/pets/{petId}', method: 'get', summary: 'Get a pet', description: null, tags: ['pets'] });
    const search = await t.req('GET', `/v1/tools/connectors/${connectorId}/operations?query=REPLACE`);
    expect(search.json().map((o: { operationId: string }) => o.operationId)).toEqual(['put_pets_petId']);
    const viaConn = await t.req('GET', `/v1/connectors/${connectorId}/${connectionId}/operations?query=tree`);
    expect(viaConn.json().map((o: { operationId: string }) => o.operationId)).toEqual(['postTree']);
    const underscore = await t.req('GET', `/v1/tools/connectors/_/operations?connection_id=${connectionId}&query=pets`);
    expect(underscore.json()).toHaveLength(2);
    expect((await t.req('GET', `/v1/tools/connectors/${connectorId}/operations?query=100%25_`)).json()).toEqual([]);
  });

  it('answers the schema of spec 2.6 with parameters merged and references inlined', async () => {
    const r = await t.req('GET', `/v1/tools/connectors/${connectorId}/connections/${connectionId}/getPet/schema`);
    expect(r.statusCode).toBe(200);
    const s = r.json();
    expect(s).toMatchObject({ operationId: 'getPet', path: '/pets/{petId}', method: 'get' });
    expect(s.input.type).toBe('object');
    expect(s.input.required).toEqual(['query_params', 'path_params']);
    expect(s.input.properties.path_params).toEqual({ type: 'object', properties: { petId: { type: 'integer', description: 'path level' } }, required: ['petId'] });
    expect(s.input.properties.query_params).toEqual({
      type: 'object',
      properties: { verbose: { type: 'string', enum: ['yes', 'no'], description: 'operation wins' } },
      required: ['verbose'],
    });
    expect(s.input.properties.headers).toEqual({ type: 'object', properties: { 'X-Trace': { type: 'string' } } });
    expect(s.input.properties.body_params).toEqual({ type: 'object', properties: {} });
    // lowest 2xx with JSON (201 is text) is 200, through components/responses
    expect(s.output.properties.name).toEqual({ type: ['string', 'null'] });
    expect(s.output.properties.owner).toEqual({ type: 'object', description: 'The owner', properties: { email: { type: 'string', format: 'email' } } });
    expect(s.output.properties.kind.discriminator).toEqual({ propertyName: 'type', mapping: { cat: 'Cat' } });
    expect(s.output.properties.kind.oneOf[1].allOf[0].properties.meows).toEqual({ type: 'boolean' });
    expect(refsIn(s)).toEqual([]);

    const byCatalogId = await t.req('GET', `/v1/tools/connectors/_/connections/${connectionId}/${s.id}/schema`);
    expect(byCatalogId.json()).toEqual(s);
  });

  it('puts the JSON body first and cuts recursion with the contract marker', async () => {
    const put = (await t.req('GET', `/v1/tools/connectors/_/connections/${connectionId}/put_pets_petId/schema`)).json();
    expect(put.input.required).toEqual(['path_params', 'body_params']);
    expect(put.input.properties.body_params.required).toEqual(['name']);
    expect(put.output).toEqual({});
    const tree = (await t.req('GET', `/v1/tools/connectors/_/connections/${connectionId}/postTree/schema`)).json();
    expect(tree.input.properties.body_params.properties.children.items).toEqual({ type: 'object', description: 'Recursive reference to Node', 'x-recursive': 'Node' });
    expect(tree.output.items.properties.children.items['x-recursive']).toBe('Node');
  });

  it('answers 404 for unknown or foreign ids, exactly like missing ones', async () => {
    const base = `/v1/tools/connectors/${connectorId}/connections/${connectionId}`;
    const unknownOp = await t.req('GET', `${base}/nope/schema`);
    expect(unknownOp.statusCode).toBe(404);
    expect(unknownOp.json()).toEqual({ detail: 'Operation not found' });
    const foreign = await t.req('GET', `${base}/getPet/schema`, undefined, { 'x-api-key': t.keyB });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ detail: 'Connection not found' });
    const otherConnector = await t.req('POST', '/v1/connectors', { name: 'other', openapi: PETS });
    const mismatch = await t.req('GET', `/v1/tools/connectors/${otherConnector.json().id}/connections/${connectionId}/getPet/schema`);
    expect(mismatch.statusCode).toBe(404);
    expect((await t.req('GET', `/v1/connectors/${connectorId}`, undefined, { 'x-api-key': t.keyB })).json()).toEqual({ detail: 'Connector not found' });
    expect((await t.req('GET', `/v1/tools/connectors/${connectorId}/operations`, undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
    expect((await t.req('DELETE', `/v1/connectors/${connectorId}`, undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/connectors/${connectorId}`, undefined, { 'x-api-key': '' })).statusCode).toBe(401);
  });

  it('keeps connection secrets write-only', async () => {
    const r = await t.req('GET', `/v1/connectors/${connectorId}/connections`);
    expect(r.statusCode).toBe(200);
    const [conn] = r.json().items;
    expect(conn).toMatchObject({ id: connectionId, connector_id: connectorId, name: 'prod', base_url: null, security: { type: 'bearer', token: '********' }, headers: { 'X-Custom': '********' } });
    expect(JSON.stringify(r.json())).not.toContain('sekret-token');
    const stored = await t.c.db.kysely.selectFrom('connector_connections').selectAll().where('id', '=', connectionId).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain('sekret-token');
    expect(JSON.stringify(stored)).not.toContain('hidden');
  });

  it('validates connections: security kinds, base_url needed when the server URL is relative', async () => {
    const bad = await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'x', security: { type: 'digest' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'security', 'type']);
    const rel = await t.req('POST', '/v1/connectors', { name: 'rel', openapi: { ...PETS, servers: [{ url: '/api/v3' }] } });
    const noBase = await t.req('POST', `/v1/connectors/${rel.json().id}/connect`, { name: 'x' });
    expect(noBase.statusCode).toBe(422);
    expect(noBase.json().detail[0].loc).toEqual(['body', 'base_url']);
    const ok = await t.req('POST', `/v1/connectors/${rel.json().id}/connect`, { name: 'x', base_url: 'http://127.0.0.1:9/api/' });
    expect(ok.json().base_url).toBe('http://127.0.0.1:9/api');
  });

  it('deletes connections and connectors', async () => {
    const conn = await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'temp' });
    expect((await t.req('DELETE', `/v1/connectors/${connectorId}/connections/${conn.json().id}`)).statusCode).toBe(204);
    expect((await t.req('DELETE', `/v1/connectors/${connectorId}/connections/${conn.json().id}`)).statusCode).toBe(404);
    const other = await t.req('POST', '/v1/connectors', { name: 'doomed', openapi: PETS });
    const id = other.json().id;
    const c2 = await t.req('POST', `/v1/connectors/${id}/connect`, { name: 'c' });
    expect((await t.req('DELETE', `/v1/connectors/${id}`)).statusCode).toBe(204);
    expect((await t.req('GET', `/v1/connectors/${id}`)).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/tools/connectors/_/connections/${c2.json().id}/getPet/schema`)).statusCode).toBe(404);
  });
});
