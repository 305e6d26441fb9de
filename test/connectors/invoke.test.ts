import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/** Invoke against a scripted upstream on 127.0.0.1 (allowed explicitly through AGENTRY_EGRESS_ALLOW). */

function document(serverUrl: string) {
  const item = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } };
  return {
    openapi: '3.0.3',
    info: { title: 'Items', version: '1' },
    servers: [{ url: serverUrl }],
    paths: {
      '/items/{id}': {
        get: {
          operationId: 'getItem',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
            { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
            { name: 'filter', in: 'query', style: 'deepObject', schema: { type: 'object' } },
            { name: 'X-Request-Tag', in: 'header', schema: { type: 'string' } },
          ],
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: item } } } },
        },
      },
      '/items': {
        post: {
          operationId: 'createItem',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } } } },
          },
          responses: { '201': { description: 'created', content: { 'application/json': { schema: item } } } },
        },
      },
      '/form': {
        post: {
          operationId: 'postForm',
          requestBody: { content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'string' } } } } } } },
          responses: { '200': { description: 'ok' } },
        },
      },
      '/slow': { get: { operationId: 'slow', responses: { '200': { description: 'ok' } } } },
      '/fail': { get: { operationId: 'fail', responses: { '200': { description: 'ok' } } } },
      '/text': { get: { operationId: 'text', responses: { '200': { description: 'ok', content: { 'text/plain': {} } } } } },
      '/hop': { get: { operationId: 'hop', responses: { '200': { description: 'ok' } } } },
    },
  };
}

describe.each(TEST_DBS)('connector invoke (%s)', (kind) => {
  let t: TestApp;
  let up: UpstreamApi;
  let connectorId: string;
  let tokenRequests = 0;
  const revoked = new Set<string>();
  const connect = async (body: Record<string, unknown>) => {
    const r = await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'c', ...body });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().id as string;
  };
  const invoke = (connectionId: string, op: string, payload: unknown, app = t) =>
    app.req('POST', `/v1/tools/connectors/${connectorId}/connections/${connectionId}/${op}/invoke`, payload);

  beforeAll(async () => {
    up = await startUpstreamApi();
    t = await createTestApp(kind, { env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1' } });
    up.on('GET', '/items/42', (r) =>
      revoked.has(String(r.headers.authorization)) ? { status: 401, json: { error: 'token revoked' } } : { json: { id: 42, name: 'answer', auth: r.headers.authorization ?? null } },
    );
    up.on('POST', '/items', (r) => ({ status: 201, json: { created: JSON.parse(r.body) } }));
    up.on('POST', '/form', () => ({ text: 'ok' }));
    up.on('GET', '/slow', () => ({ delayMs: 3000, json: {} }));
    up.on('GET', '/fail', () => ({ status: 500, json: { error: 'boom' } }));
    up.on('GET', '/text', () => ({ text: 'plain words' }));
    up.on('GET', '/hop', () => ({ status: 302, headers: { location: `http://127.0.0.2:${up.port}/items/42` } }));
    up.on('POST', '/token', (r) => {
      tokenRequests++;
      const basic = Buffer.from(String(r.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      if (basic !== 'client-1:secret-1') return { status: 401, json: { error: 'invalid_client' } };
      const form = new URLSearchParams(r.body);
      return { json: { access_token: `tok-${tokenRequests}-${form.get('scope')}`, token_type: 'bearer', expires_in: 3600 } };
    });
    const imported = await t.req('POST', '/v1/connectors', { name: 'items', openapi: document(up.url) });
    connectorId = imported.json().id;
  });
  afterAll(async () => {
    await t?.close();
    await up?.close();
  });

  it('builds the request from path, query, headers and JSON body and parses the answer', async () => {
    const id = await connect({});
    const r = await invoke(id, 'getItem', {
      path_params: { id: 42 },
      query_params: { tags: ['a', 'b c'], filter: { kind: 'x' } },
      headers: { 'X-Request-Tag': 'abc' },
    });
    expect(r.statusCode, r.body).toBe(200);
    const out = r.json();
    expect(out).toMatchObject({ status_code: 200, result: { id: 42, name: 'answer', auth: null } });
    expect(out.headers['content-type']).toBe('application/json');
    expect(typeof out.execution_time_ms).toBe('number');
    const sent = up.received('GET', '/items/42').at(-1)!;
    expect(sent.query.getAll('tags')).toEqual(['a', 'b c']);
    expect(sent.query.get('filter[kind]')).toBe('x');
    expect(sent.headers['x-request-tag']).toBe('abc');

    const created = await invoke(id, 'createItem', { body_params: { name: 'new', qty: 2 } });
    expect(created.json()).toMatchObject({ status_code: 201, result: { created: { name: 'new', qty: 2 } } });
    expect(up.received('POST', '/items').at(-1)!.headers['content-type']).toBe('application/json');

    await invoke(id, 'postForm', { body_params: { a: '1', b: ['x', 'y'] } });
    const form = up.received('POST', '/form').at(-1)!;
    expect(form.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(form.body).toBe('a=1&b=x&b=y');

    expect((await invoke(id, 'text', {})).json().result).toBe('plain words');
  });

  it('applies each security kind', async () => {
    const headerKey = await connect({ security: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: 'k-1' }, headers: { 'X-Static': 's' } });
    await invoke(headerKey, 'getItem', { path_params: { id: 42 } });
    let sent = up.received('GET', '/items/42').at(-1)!;
    expect(sent.headers['x-api-key']).toBe('k-1');
    expect(sent.headers['x-static']).toBe('s');

    const queryKey = await connect({ security: { type: 'api_key', in: 'query', name: 'key', value: 'k-2' }, general_params: { locale: 'en' } });
    await invoke(queryKey, 'getItem', { path_params: { id: 42 } });
    sent = up.received('GET', '/items/42').at(-1)!;
    expect(sent.query.get('key')).toBe('k-2');
    expect(sent.query.get('locale')).toBe('en');

    const bearer = await connect({ security: { type: 'bearer', token: 'tok' } });
    expect((await invoke(bearer, 'getItem', { path_params: { id: 42 } })).json().result.auth).toBe('Bearer tok');

    const basic = await connect({ security: { type: 'basic', username: 'u', password: 'p:w' } });
    expect((await invoke(basic, 'getItem', { path_params: { id: 42 } })).json().result.auth).toBe(`Basic ${Buffer.from('u:p:w').toString('base64')}`);
  });

  it('gets OAuth2 client-credentials tokens and caches them', async () => {
    const before = tokenRequests;
    const oauth = await connect({
      security: { type: 'oauth2_client_credentials', token_url: `${up.url}/token`, client_id: 'client-1', client_secret: 'secret-1', scopes: ['read', 'write'] },
    });
    const first = await invoke(oauth, 'getItem', { path_params: { id: 42 } });
    expect(first.json().result.auth).toBe(`Bearer tok-${before + 1}-read write`);
    const second = await invoke(oauth, 'getItem', { path_params: { id: 42 } });
    expect(second.json().result.auth).toBe(first.json().result.auth);
    expect(tokenRequests).toBe(before + 1);

    // The upstream stops accepting the cached token: one fresh token, one retry, the caller never sees the 401.
    revoked.add(first.json().result.auth);
    const third = await invoke(oauth, 'getItem', { path_params: { id: 42 } });
    expect(third.json().status_code).toBe(200);
    expect(third.json().result.auth).toBe(`Bearer tok-${before + 2}-read write`);
    expect(tokenRequests).toBe(before + 2);

    const wrong = await connect({ security: { type: 'oauth2_client_credentials', token_url: `${up.url}/token`, client_id: 'client-1', client_secret: 'nope', scopes: [] } });
    const refused = await invoke(wrong, 'getItem', { path_params: { id: 42 } });
    expect(refused.statusCode).toBe(502);
    expect(refused.json().detail).toMatch(/token endpoint answered 401/);
  });

  it('stops reading a token endpoint that answers without end: 502 naming the limit, the connection closed', async () => {
    // A token answer is a few hundred bytes; this one streams 1 MiB every 20 ms until the socket closes. Read whole,
    // it grew the process by the whole stream (1.7 GB from one call in a probe) until the call's timeout.
    let sent = 0;
    let closed = false;
    const endless = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"access_token":"');
      const chunk = Buffer.alloc(1 << 20, 97);
      const timer = setInterval(() => {
        res.write(chunk);
        sent += chunk.length;
      }, 20);
      res.on('close', () => {
        clearInterval(timer);
        closed = true;
      });
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
    try {
      const port = (endless.address() as AddressInfo).port;
      const id = await connect({
        timeout_seconds: 4,
        security: { type: 'oauth2_client_credentials', token_url: `http://127.0.0.1:${port}/token`, client_id: 'c', client_secret: 's', scopes: [] },
      });
      const r = await invoke(id, 'getItem', { path_params: { id: 42 } });
      expect(r.statusCode, r.body).toBe(502);
      expect(r.json()).toEqual({ detail: 'OAuth2 token endpoint answered more than 64 KiB' });
      await expect.poll(() => closed).toBe(true);
      expect(sent).toBeLessThan(8 << 20);
    } finally {
      endless.closeAllConnections();
      await new Promise((r) => endless.close(r));
    }
  });

  it('validates the payload against the input schema (422 with loc) and sends nothing', async () => {
    const id = await connect({});
    const count = up.requests.length;
    const missing = await invoke(id, 'getItem', {});
    expect(missing.statusCode).toBe(422);
    expect(missing.json().detail).toEqual([{ loc: ['body', 'path_params', 'id'], msg: 'Field required', type: 'missing' }]);
    const wrongType = await invoke(id, 'getItem', { path_params: { id: 'abc' } });
    expect(wrongType.json().detail).toEqual([{ loc: ['body', 'path_params', 'id'], msg: 'Input should be a valid integer', type: 'int_type' }]);
    const body = await invoke(id, 'createItem', { body_params: { qty: 0 } });
    expect(body.statusCode).toBe(422);
    expect(body.json().detail).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'body_params', 'name'], msg: 'Field required', type: 'missing' },
        expect.objectContaining({ loc: ['body', 'body_params', 'qty'], type: 'greater_than_equal' }),
      ]),
    );
    const noBody = await invoke(id, 'createItem', {});
    expect(noBody.json().detail).toEqual([{ loc: ['body', 'body_params'], msg: 'Field required', type: 'missing' }]);
    const extra = await invoke(id, 'getItem', { path_params: { id: 1 }, other: 1 });
    expect(extra.json().detail[0]).toMatchObject({ loc: ['body', 'other'], type: 'extra_forbidden' });
    expect(up.requests.length).toBe(count);
  });

  it('reports upstream errors as results, times out, and 404s unknown operations', async () => {
    const id = await connect({ timeout_seconds: 0.3 });
    const fail = await invoke(id, 'fail', {});
    expect(fail.statusCode).toBe(200);
    expect(fail.json()).toMatchObject({ status_code: 500, result: { error: 'boom' } });
    const slow = await invoke(id, 'slow', {});
    expect(slow.statusCode).toBe(504);
    expect(slow.json()).toEqual({ detail: 'Upstream request timed out after 0.3 s' });
    expect((await invoke(id, 'nope', {})).statusCode).toBe(404);
    const foreign = await t.req('POST', `/v1/tools/connectors/${connectorId}/connections/${id}/getItem/invoke`, { path_params: { id: 42 } }, { 'x-api-key': t.keyB });
    expect(foreign.statusCode).toBe(404);
  });

  it('checks every redirect hop against the egress policy', async () => {
    const id = await connect({});
    const r = await invoke(id, 'hop', {});
    expect(r.statusCode).toBe(403);
    expect(r.json().detail).toMatch(/refused: 127\.0\.0\.2 is a private, loopback or link-local address/);
  });

  it('refuses a private address when it is not allowed', async () => {
    const strict = await createTestApp(kind);
    try {
      const imported = await strict.req('POST', '/v1/connectors', { name: 'items', openapi: document(up.url) });
      const conn = await strict.req('POST', `/v1/connectors/${imported.json().id}/connect`, { name: 'c' });
      const count = up.requests.length;
      const r = await strict.req('POST', `/v1/tools/connectors/_/connections/${conn.json().id}/getItem/invoke`, { path_params: { id: 42 } });
      expect(r.statusCode).toBe(403);
      expect(r.json().detail).toBe(`Outbound request to ${up.url} refused: 127.0.0.1 is a private, loopback or link-local address (allow it with AGENTRY_EGRESS_ALLOW)`);
      expect(up.requests.length).toBe(count);
    } finally {
      await strict.close();
    }
  });
});
