import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileLifetimeRepository } from '../../src/files/file-lifetime.repository.js';
import { FilesRepository, type FileRecord } from '../../src/files/files.repository.js';
import { jsonTooDeep } from '../../src/http/json-depth.js';
import { newId } from '../../src/lib/ids.js';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { TEST_DBS } from '../support/harness.js';
import { api, createAgent, enableWebhook, hook, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';
import { deepJson } from './fuzz-gen.js';

/**
 * Issue 20, the smaller findings: each bad request answers a 4xx in the contract's shape and changes nothing.
 * One test per finding, over real sockets (so the webhook fast lane and the raw-response headers are exercised),
 * on both databases.
 */


describe.each(TEST_DBS)('hostile requests (%s)', (kind) => {
  let w: WebhookWorld;
  let up: UpstreamApi;
  let agentId: string;
  let publicUrl: string;
  let orgA: string;

  const taskCount = async () => (await api(w, 'GET', `/v1/agents/${agentId}/tasks?per_page=1`)).json.total as number;
  const fileCount = () => new FilesRepository(w.server.container.db).count(orgA);
  const raw = (base: string, path: string, init: RequestInit = {}) =>
    fetch(base + path, init).then(async (r) => ({ status: r.status, text: await r.text(), headers: r.headers }));

  beforeAll(async () => {
    up = await startUpstreamApi();
    w = await startWebhookWorld(kind, { AGENTRY_MAX_FILES_PER_REQUEST: '20', AGENTRY_SYNC_TIMEOUT_MS: '2000' });
    agentId = await createAgent(w);
    publicUrl = await enableWebhook(w, agentId);
    orgA = (await w.server.container.auth.byApiKey(w.keyA)).organizationId;
  });
  afterAll(async () => {
    await w?.close();
    await up?.close();
  });

  it('1. a broken multipart body on the webhook listener is a 422 in the contract shape, with or without credentials', async () => {
    const before = await taskCount();
    for (const [path, headers] of [
      ['/', {}],
      [`/?agent_id=${agentId}`, { 'x-api-key': w.keyA }],
      [new URL(publicUrl).pathname, {}],
    ] as const) {
      for (const type of ['multipart/form-data', 'multipart/form-data; boundary=zz']) {
        const r = await raw(w.hooks, path, { method: 'POST', headers: { ...headers, 'content-type': type }, body: type.includes('boundary') ? '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\nx' : 'x' });
        expect(r.status, `${path} ${type}: ${r.text}`).toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
        expect(JSON.parse(r.text)).toHaveProperty('detail');
      }
    }
    // Without a key and with agent_id in the query, the body is never read: 401 whatever it holds.
    const unauth = await raw(w.hooks, `/?agent_id=${agentId}`, { method: 'POST', headers: { 'content-type': 'multipart/form-data' }, body: 'x' });
    expect(unauth.status).toBe(401);
    expect(JSON.parse(unauth.text)).toEqual({ detail: 'API key not specified' });
    const noBoundary = await raw(w.hooks, `/?agent_id=${agentId}`, { method: 'POST', headers: { 'x-api-key': w.keyA, 'content-type': 'multipart/form-data' }, body: 'x' });
    expect(noBoundary.status).toBe(422);
    expect(JSON.parse(noBoundary.text)).toEqual({ detail: [{ loc: ['body'], msg: 'Invalid multipart body', type: 'value_error' }] });
    expect(await taskCount()).toBe(before);
    expect(await fileCount()).toBe(0);
  });

  it('2. JSON nested 4,500 deep is a 422 json_invalid on the API, the fast lane and the Fastify webhook routes', async () => {
    const deep = deepJson(4500);
    const expected = { detail: [{ loc: ['body'], msg: 'JSON nested deeper than 256 levels', type: 'json_invalid' }] };
    const before = await taskCount();
    const viaApi = await raw(w.api, '/v1/agents', { method: 'POST', headers: { 'x-api-key': w.keyA, 'content-type': 'application/json' }, body: `{"name":"deep","x":${deep}}` });
    expect([viaApi.status, JSON.parse(viaApi.text)]).toEqual([422, expected]);
    // `application/json` exactly goes through the fast lane; with a parameter it is Fastify's.
    for (const type of ['application/json', 'application/json; x=1']) {
      const lane = await raw(w.hooks, new URL(publicUrl).pathname, { method: 'POST', headers: { 'content-type': type }, body: `{"prompt":"x","x":${deep}}` });
      expect([lane.status, JSON.parse(lane.text)], type).toEqual([422, expected]);
      const key = await raw(w.hooks, `/?agent_id=${agentId}`, { method: 'POST', headers: { 'x-api-key': w.keyA, 'content-type': type }, body: deep });
      expect([key.status, JSON.parse(key.text)], type).toEqual([422, expected]);
    }
    expect(await taskCount()).toBe(before);
    // Depth is counted outside strings only, and a body within the limit is parsed as usual.
    expect(jsonTooDeep(`{"a":"${'['.repeat(1000)}"}`, 256)).toBe(false);
    expect(jsonTooDeep(deepJson(256), 256)).toBe(false);
    expect(jsonTooDeep(deepJson(257), 256)).toBe(true);
    const within = await raw(w.api, '/v1/agents', { method: 'POST', headers: { 'x-api-key': w.keyA, 'content-type': 'application/json' }, body: `{"name":"within","x":${deepJson(200)}}` });
    expect(within.status, within.text).toBeLessThan(500);
  });

  it('3. a malformed % escape in input.files is a 422 naming the field, and no task is created', async () => {
    const before = await taskCount();
    const r = await api(w, 'POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'x', files: ['http://127.0.0.1:1/ok.txt', 'http://127.0.0.1:1/a%zz'] } });
    expect(r.status).toBe(422);
    expect(r.json.detail[0]).toMatchObject({ loc: ['body', 'input', 'files', 1], type: 'value_error' });
    expect(r.json.detail[0].msg).toMatch(/percent-encoding/);
    expect(await taskCount()).toBe(before);
  });

  it('4. connector import: YAML tags, alias bombs and deep schemas are 422; reference chains stay bounded', async () => {
    const count = async () => (await api(w, 'GET', '/v1/connectors')).json.total as number;
    const before = await count();
    const head = 'openapi: 3.0.0\ninfo:\n  title: x\n  version: "1"\n';
    const op = (extra: string) => `${head}paths:\n  /a:\n    get:\n      operationId: a\n${extra}      responses:\n        '200':\n          description: ok\n`;
    const laughs =
      head +
      'x-a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' +
      ['b', 'c', 'd', 'e', 'f', 'g', 'h'].map((k, i) => `x-${k}: &${k} [${Array(9).fill(`*${'abcdefg'[i]}`).join(',')}]\n`).join('') +
      'paths: {}\n';
    const deepSchema = '{"type":"object","properties":{"a":'.repeat(3000) + '{"type":"string"}' + '}}'.repeat(3000);
    const deepDoc = `{"openapi":"3.0.0","info":{"title":"x","version":"1"},"paths":{"/a":{"post":{"operationId":"a","requestBody":{"content":{"application/json":{"schema":${deepSchema}}}},"responses":{"200":{"description":"ok"}}}}}}`;
    const cases: [string, string, RegExp][] = [
      ['!!js/function', op('      description: !!js/function "function(){return 1}"\n'), /Unresolved tag.*js\/function/],
      ['a custom tag', op('      description: !custom "x"\n'), /Unresolved tag: !custom/],
      ['a billion laughs', laughs, /alias/i],
      ['a 3,000-level schema', deepDoc, /nested deeper than 256 levels/],
    ];
    for (const [what, text, msg] of cases) {
      const r = await api(w, 'POST', '/v1/connectors', { name: `bad-${what}`, openapi: text });
      expect(r.status, `${what}: ${JSON.stringify(r.json)}`).toBe(422);
      expect(r.json.detail[0].loc).toEqual(['body', 'openapi']);
      expect(r.json.detail[0].msg, what).toMatch(msg);
    }
    const fd = new FormData();
    fd.set('name', 'deep-upload');
    fd.append('file', new Blob([deepDoc]), 'deep.json');
    const upload = await fetch(`${w.api}/v1/connectors`, { method: 'POST', headers: { 'x-api-key': w.keyA }, body: fd });
    expect(upload.status).toBe(422);
    expect(await count()).toBe(before);

    // Schemas each one allOf-reference deeper: 3,000 of them are refused with a clear message (the validator follows
    // references recursively); 400 are imported, and the operation's schema is cut to a bounded depth.
    const chain = (n: number) => {
      const schemas: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) schemas[`S${i}`] = i === n - 1 ? { type: 'string' } : { allOf: [{ $ref: `#/components/schemas/S${i + 1}` }], description: `s${i}` };
      return { openapi: '3.0.0', info: { title: 'chain', version: '1' }, paths: { '/c': { post: { operationId: 'c', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/S0' } } } }, responses: { '200': { description: 'ok' } } } } }, components: { schemas } };
    };
    const long = await api(w, 'POST', '/v1/connectors', { name: 'long-chain', openapi: chain(3000) });
    expect(long.status).toBeLessThan(500);
    if (long.status === 422) expect(long.json.detail[0].msg).toMatch(/nested deeper than 256 levels/);
    const imported = await api(w, 'POST', '/v1/connectors', { name: 'chain', openapi: chain(400) });
    expect(imported.status, JSON.stringify(imported.json)).toBe(201);
    const conn = await api(w, 'POST', `/v1/connectors/${imported.json.id}/connect`, { name: 'c', base_url: 'http://127.0.0.1:1' });
    const schema = await api(w, 'GET', `/v1/tools/connectors/${imported.json.id}/connections/${conn.json.id}/c/schema`);
    expect(schema.status).toBe(200);
    let depth = 0;
    const walk = (v: unknown, d: number): void => {
      depth = Math.max(depth, d);
      if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x, d + 1);
    };
    walk(schema.json, 0);
    expect(depth).toBeLessThan(300);
  });

  it('5. 5,000 files in one call: refused 413 naming the limit while streaming, nothing stored; the repository chunks its writes', async () => {
    const fd = new FormData();
    fd.set('prompt', 'many');
    fd.set('asynchronous', 'true');
    for (let i = 0; i < 5000; i++) fd.append('files', new Blob([`file ${i}`]), `f${i}.txt`);
    const before = await taskCount();
    const r = await hook(w, publicUrl, { multipart: fd });
    expect(r.status).toBe(413);
    expect(r.json).toEqual({ detail: 'Too many files: at most 20 files per request' });
    expect(await taskCount()).toBe(before);
    expect(await fileCount()).toBe(0);

    // Below the request limit, a caller-sized list still never reaches the database's variable limit.
    const repo = new FilesRepository(w.server.container.db);
    const records: FileRecord[] = Array.from({ length: 5000 }, (_, i) => ({
      id: newId(),
      organizationId: orgA,
      name: `f${i}.txt`,
      kind: 'txt',
      mimeType: 'text/plain',
      size: 1,
      sha256: 'x',
      blobKey: `k${i}`,
      text: null,
      createdAt: Date.now(),
      taskId: null,
      documentId: null,
    }));
    await repo.insertMany(records);
    expect(await repo.count(orgA)).toBe(5000);
    const lifetime = new FileLifetimeRepository(w.server.container.db);
    const released = await lifetime.release(orgA, records.map((f) => f.id), Date.now());
    expect(released).toHaveLength(5000);
    expect(await repo.count(orgA)).toBe(0);
    await lifetime.forget(released.map((b) => b.blobKey));
  });

  it('6. task ids of 101-128 characters work; longer path parameters and bad escapes are 404 in the contract shape', async () => {
    for (const id of ['t'.repeat(101), 'x'.repeat(128), '💬'.repeat(128)]) {
      const created = await api(w, 'POST', `/v1/agents/${agentId}/invoke/async`, { id, input: { text: 'hi' } });
      expect(created.status, JSON.stringify(created.json)).toBeLessThan(300);
      const got = await api(w, 'GET', `/v1/tasks/${encodeURIComponent(id)}`);
      expect(got.status).toBe(200);
      expect(got.json.id).toBe(id);
    }
    for (const path of [`/v1/tasks/${'y'.repeat(129)}`, `/v1/tasks/${'z'.repeat(5000)}`, '/v1/tasks/%zz', `/v1/agents/${'a'.repeat(3000)}/tasks`]) {
      const r = await raw(w.api, path, { headers: { 'x-api-key': w.keyA } });
      expect(r.status, path.slice(0, 40)).toBe(404);
      expect(JSON.parse(r.text).detail).toMatch(/not found/i);
    }
  });

  it('7. caller mistakes on connector invoke are 422/404; 502 only when the upstream fails', async () => {
    up.on('GET', '/items/1', () => ({ json: { id: 1 } }));
    const doc = {
      openapi: '3.0.3',
      info: { title: 'I', version: '1' },
      servers: [{ url: up.url }],
      paths: {
        '/items/{id}': {
          get: {
            operationId: 'getItem',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
              { name: 'X-Tag', in: 'header', schema: { type: 'string' } },
            ],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    };
    const connector = (await api(w, 'POST', '/v1/connectors', { name: 'inv', openapi: doc })).json.id;
    const conn = (await api(w, 'POST', `/v1/connectors/${connector}/connect`, { name: 'c' })).json.id;
    const invoke = (op: string, body: unknown, c = conn) => api(w, 'POST', `/v1/tools/connectors/${connector}/connections/${c}/${op}/invoke`, body);
    const seen = up.requests.length;
    const cases: [string, unknown, number, unknown[]][] = [
      ['missing required', {}, 422, ['body', 'path_params', 'id']],
      ['wrong type', { path_params: { id: 'x' } }, 422, ['body', 'path_params', 'id']],
      ['header with CR LF', { path_params: { id: 1 }, headers: { 'X-Tag': 'a\r\nb' } }, 422, ['body', 'headers', 'X-Tag']],
      ['header outside Latin-1', { path_params: { id: 1 }, headers: { 'X-Tag': '☃' } }, 422, ['body', 'headers', 'X-Tag']],
      ['invalid header name', { path_params: { id: 1 }, headers: { 'bad name': 'v' } }, 422, ['body', 'headers', 'bad name']],
      ['invalid cookie name', { path_params: { id: 1 }, cookies: { 'a;b': 'v' } }, 422, ['body', 'cookies', 'a;b']],
      ['unknown field', { path_params: { id: 1 }, extra: 1 }, 422, ['body', 'extra']],
    ];
    for (const [what, body, status, loc] of cases) {
      const r = await invoke('getItem', body);
      expect(r.status, `${what}: ${JSON.stringify(r.json)}`).toBe(status);
      expect(r.json.detail[0].loc, what).toEqual(loc);
      expect(JSON.stringify(r.json)).not.toContain('a\\r\\nb');
    }
    expect((await invoke('nope', { path_params: { id: 1 } })).status).toBe(404);
    expect((await invoke('getItem', { path_params: { id: 1 } }, newId())).status).toBe(404);
    expect(up.requests.length).toBe(seen);
    // Connections refuse what could never be sent.
    const badConn = await api(w, 'POST', `/v1/connectors/${connector}/connect`, { name: 'c2', headers: { 'x-a': 'v\nx' } });
    expect(badConn.status).toBe(422);
    // The real thing still works, and an unreachable upstream is the one 502.
    expect((await invoke('getItem', { path_params: { id: 1 } })).json).toMatchObject({ status_code: 200, result: { id: 1 } });
    const deadConn = (await api(w, 'POST', `/v1/connectors/${connector}/connect`, { name: 'dead', base_url: 'http://127.0.0.1:1' })).json.id;
    const dead = await invoke('getItem', { path_params: { id: 1 } }, deadConn);
    expect(dead.status).toBe(502);
    expect(typeof dead.json.detail).toBe('string');
  });

  it('fuzzer finding: NUL in text is a 422 on both databases, and never blocks the task inbox for others', async () => {
    const nul = { detail: [{ loc: ['body'], msg: 'Text cannot contain NUL characters (\\u0000)', type: 'string_type' }] };
    const answers = await Promise.all([
      hook(w, publicUrl, { json: { prompt: 'a\u0000b', asynchronous: true } }),
      hook(w, publicUrl, { json: { prompt: 'after the NUL', asynchronous: true } }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([422, 200]);
    expect(answers[0]!.json).toEqual(nul);
    expect((await api(w, 'POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'a\u0000' } })).status).toBe(422);
    expect((await api(w, 'GET', `/v1/tasks?user_id=%00`)).status).toBe(422);
    expect((await api(w, 'GET', `/v1/tasks/%00`)).status).toBe(404);
    const listed = await api(w, 'GET', `/v1/agents/${agentId}/tasks?per_page=50`);
    expect(listed.status).toBe(200);
    expect(listed.json.items.map((t: { input: { text: string } }) => t.input.text)).toContain('after the NUL');
  });

  it('8. every answer of both listeners carries x-content-type-options: nosniff', async () => {
    const answers = [
      await raw(w.api, '/health'),
      await raw(w.api, '/v1/agents', { headers: { 'x-api-key': w.keyA } }),
      await raw(w.api, '/v1/agents'),
      await raw(w.api, '/v1/nope', { headers: { 'x-api-key': w.keyA } }),
      await raw(w.api, '/'),
      await raw(w.api, `/v1/tasks/${'q'.repeat(3000)}`, { headers: { 'x-api-key': w.keyA } }),
      await raw(w.api, '/v1/agents', { method: 'POST', headers: { 'x-api-key': w.keyA, 'content-type': 'application/json' }, body: '{' }),
      await raw(w.hooks, '/health'),
      await raw(w.hooks, '/nope'),
      await raw(w.hooks, new URL(publicUrl).pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"hi","asynchronous":true}' }),
      await raw(w.hooks, new URL(publicUrl).pathname, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }),
      await raw(w.hooks, '/wh_unknown', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
      await raw(w.hooks, new URL(publicUrl).pathname, { method: 'POST', body: new URLSearchParams({ prompt: 'hi', asynchronous: 'true' }) }),
    ];
    for (const a of answers) expect(a.headers.get('x-content-type-options'), `${a.status} ${a.text.slice(0, 80)}`).toBe('nosniff');
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 404, 200, 404, 422, 200, 404, 200, 422, 401, 200]);
  });
});

