import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/errors.js';
import { isPublicPath } from '../../src/http/webhook-fast-lane.js';
import { TEST_DBS } from '../support/harness.js';
import { createAgent, enableWebhook, startWebhookWorld, type WebhookWorld } from './webhook-helpers.js';

/**
 * The webhook fast lane (src/http/webhook-fast-lane.ts) answers JSON calls on bare node:http; Fastify answers the
 * rest and `inject`. What a JSON call is answered is one table run against the lane and Fastify alone
 * (webhook-contract.test.ts); here are the lane's own edges, over real sockets: answering before the body, handing
 * other requests to Fastify, the same bytes on the wire as Fastify's answer (compared with a form, which only
 * Fastify serves, where the outcome does not depend on the body format), the logs, the server's timeouts.
 */
const LIMIT = 64 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';
const DICT_TYPE = { detail: [{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }] };
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

interface Answer {
  status: number;
  rawHeaders: string[];
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Call {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

describe.each(TEST_DBS)('webhook fast lane (%s)', (kind) => {
  let w: WebhookWorld;
  let agentId: string;
  let publicPath: string;
  const keepAlive = new http.Agent({ keepAlive: true });
  // Every webhook request a Fastify route handler ran: the fast lane's requests never show up here.
  const fastifyHandled: string[] = [];
  const onHandler = (store: any) => {
    if (store.request.server === w?.server.webhooks) fastifyHandled.push(`${store.request.method} ${store.route.url}`);
  };
  const tracing = diagnostics.tracingChannel('fastify.request.handler');
  const handlers = { start: onHandler, end() {}, asyncStart() {}, asyncEnd() {}, error() {} };

  /** One request over a real socket (a keep-alive client, as webhook senders are). */
  const send = (path: string, call: Call = {}): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = http.request(w.hooks + path, { method: call.method ?? 'POST', headers: call.headers, agent: keepAlive }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end(call.body);
    });
  const json = (path: string, body: string, headers: Record<string, string> = {}) => send(path, { headers: { 'content-type': 'application/json', ...headers }, body });
  const form = (path: string, body: string, headers: Record<string, string> = {}) =>
    send(path, { headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

  /** The same request through Fastify's routing (inject never passes the server's request listener). */
  const viaFastify = async (path: string, call: Call = {}) => {
    const r = await w.server.webhooks!.inject({ method: (call.method ?? 'POST') as 'POST', url: path, headers: call.headers, payload: call.body });
    return { status: r.statusCode, headers: r.headers, body: r.body };
  };
  /** What a client can observe, transport noise (date, keep-alive parameters) aside. */
  const observable = (a: { status: number; headers: http.IncomingHttpHeaders | Record<string, unknown>; body: string }) => ({
    status: a.status,
    contentType: a.headers['content-type'],
    contentLength: a.headers['content-length'],
    retryAfter: a.headers['retry-after'],
    closes: a.headers.connection === 'close',
    body: a.body.replace(UUID, '<id>'),
  });
  /** The answer's bytes on the wire except the Date line: status, headers in order, body. */
  const wire = (a: Answer) => {
    const lines: string[] = [];
    for (let i = 0; i < a.rawHeaders.length; i += 2) if (a.rawHeaders[i]!.toLowerCase() !== 'date') lines.push(`${a.rawHeaders[i]}: ${a.rawHeaders[i + 1]}`);
    return { status: a.status, lines, body: a.body.replace(UUID, '<id>') };
  };
  /** Starts a request whose body never finishes arriving; resolves with the answer if one comes anyway. */
  const answerBeforeBody = (path: string, headers: Record<string, string>): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = http.request(w.hooks + path, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(1024 ** 3), ...headers }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, headers: res.headers, body: Buffer.concat(chunks).toString() });
          req.destroy();
        });
      });
      req.on('error', (e) => (e.message.includes('socket hang up') ? undefined : reject(e)));
      req.write('{"prompt": "' + 'x'.repeat(16 * 1024));
    });

  beforeAll(async () => {
    w = await startWebhookWorld(kind, { AGENTRY_MAX_BODY_BYTES: String(LIMIT), AGENTRY_MAX_FILE_BYTES: String(LIMIT / 2) });
    w.llm.handle(() => ({ text: 'done' }));
    agentId = await createAgent(w);
    publicPath = new URL(await enableWebhook(w, agentId)).pathname;
    tracing.subscribe(handlers);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    fastifyHandled.length = 0;
  });
  afterAll(async () => {
    tracing.unsubscribe(handlers);
    keepAlive.destroy();
    await w?.close();
  });

  it('sends a 413 with the same bytes whether the length was declared, counted while streaming, or Fastify refused a form', async () => {
    const big = JSON.stringify({ prompt: 'x'.repeat(LIMIT) });
    const declared = await json(publicPath, big);
    expect([declared.status, declared.body, declared.headers.connection]).toEqual([413, '{"detail":"Request too large"}', 'close']);
    // Chunked: no declared length, refused once the received bytes pass the limit.
    const streamed = await send(publicPath, { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, body: big });
    expect(wire(streamed)).toEqual(wire(declared));
    // A form over the limit goes through Fastify: the same bytes.
    expect(wire(await form(publicPath, `prompt=${'x'.repeat(LIMIT)}`))).toEqual(wire(declared));
  });

  it('refuses a dead public URL with 401 without waiting for its body', async () => {
    const r = await answerBeforeBody(`/wh_${'A'.repeat(43)}`, {});
    expect([r.status, r.body]).toEqual([401, '{"detail":"API key not specified"}']);
    // The same bytes as Fastify's answer to a form sent to it.
    expect(wire(await json(`/wh_${'A'.repeat(43)}`, '{"prompt":"x"}'))).toEqual(wire(await form(`/wh_${'A'.repeat(43)}`, 'prompt=x')));
    // A live URL with a body declared over the limit: 413 at once, nothing read.
    const tooBig = await answerBeforeBody(publicPath, {});
    expect([tooBig.status, tooBig.body, tooBig.headers.connection]).toEqual([413, '{"detail":"Request too large"}', 'close']);
  });

  it('key form: 401 and 403 before the body is read, and every refusal as Fastify gives it', async () => {
    const noKey = await answerBeforeBody(`/?agent_id=${agentId}`, {});
    expect([noKey.status, noKey.body]).toEqual([401, '{"detail":"API key not specified"}']);
    const wrongKey = await answerBeforeBody(`/?agent_id=${agentId}`, { 'x-api-key': 'agk_wrong' });
    expect([wrongKey.status, wrongKey.body]).toEqual([403, '{"detail":"Invalid API key"}']);
    const cases: [string, Record<string, string>][] = [
      [`/?agent_id=${agentId}`, {}],
      [`/?agent_id=${agentId}`, { 'x-api-key': 'agk_wrong' }],
      ['/', { 'x-api-key': w.keyA }],
      [`/?agent_id=${agentId}`, { 'x-api-key': w.keyB }],
    ];
    const statuses: number[] = [];
    for (const [path, headers] of cases) {
      const lane = await json(path, '{"prompt":"x"}', headers);
      expect(wire(lane)).toEqual(wire(await form(path, 'prompt=x', headers)));
      statuses.push(lane.status);
    }
    expect(statuses).toEqual([401, 403, 400, 403]);
  });

  it('key form: the key is checked once per call (before the body), on the lane and through Fastify', async () => {
    const checked = vi.spyOn(w.server.container.auth, 'byApiKey');
    const lane = await json(`/?agent_id=${agentId}`, '{"prompt":"x"}', { 'x-api-key': w.keyA });
    expect([lane.status, JSON.parse(lane.body).status]).toEqual([200, 'completed']);
    expect(checked).toHaveBeenCalledTimes(1);
    const viaForm = await form(`/?agent_id=${agentId}`, 'prompt=x', { 'x-api-key': w.keyA });
    expect([viaForm.status, JSON.parse(viaForm.body).status]).toEqual([200, 'completed']);
    expect(checked).toHaveBeenCalledTimes(2);
    // Without agent_id in the query nothing is checked before the body: the call checks the key itself, once.
    const inBody = await json('/', JSON.stringify({ prompt: 'x', agent_id: agentId }), { 'x-api-key': w.keyA });
    expect(inBody.status).toBe(200);
    expect(checked).toHaveBeenCalledTimes(3);
  });

  it('a failing lookup is 503 with retry-after, an unknown error 500 with a logged request id, as from Fastify', async () => {
    const { publicLookupUnavailable } = await import('../../src/webhooks/webhook-channels.service.js');
    vi.spyOn(w.server.container.webhooks, 'resolvePublic').mockRejectedValue(publicLookupUnavailable(new Error('db down')));
    const unavailable = await json(publicPath, '{"prompt":"x"}');
    expect([unavailable.status, unavailable.headers['retry-after'], unavailable.body]).toEqual([503, '5', '{"detail":"Public webhook lookup temporarily unavailable"}']);
    expect(wire(unavailable)).toEqual(wire(await form(publicPath, 'prompt=x')));
    vi.restoreAllMocks();

    vi.spyOn(w.server.container.webhooks, 'invoke').mockRejectedValue(new Error('boom'));
    const logged = vi.spyOn(w.server.container.log, 'error');
    const failed = await json(publicPath, '{"prompt":"x"}');
    expect(failed.status).toBe(500);
    const body = JSON.parse(failed.body);
    expect(body).toEqual({ detail: 'Internal server error', request_id: expect.stringMatching(UUID) });
    expect(logged).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'boom' }), request_id: body.request_id }, 'unhandled error');
    expect(wire(failed)).toEqual(wire(await form(publicPath, 'prompt=x')));
    // A known error thrown by the service keeps its mapping.
    vi.mocked(w.server.container.webhooks.invoke).mockRejectedValue(new AppError('conflict', 'Task id already exists'));
    expect(wire(await json(publicPath, '{"prompt":"x"}'))).toEqual(wire(await form(publicPath, 'prompt=x')));
  });

  it('hands forms, multipart, other types, methods and paths to Fastify unchanged', async () => {
    const viaForm = await form(publicPath, 'prompt=from+a+form');
    expect([viaForm.status, viaForm.body]).toEqual([200, '{"status":"Started"}']);
    const fd = new FormData();
    fd.set('prompt', 'from multipart');
    fd.append('files', new Blob(['hello']), 'note.txt');
    const multi = await fetch(w.hooks + publicPath, { method: 'POST', body: fd });
    expect([multi.status, await multi.text()]).toEqual([200, '{"status":"Started"}']);
    expect(fastifyHandled).toEqual(['POST /wh_:secret', 'POST /wh_:secret']);

    const health = await send('/health', { method: 'GET' });
    expect([health.status, health.body, health.headers['content-type']]).toEqual([200, '"ok"', JSON_TYPE]);
    for (const [path, call] of [
      ['/nope', { headers: { 'content-type': 'application/json' }, body: '{}' }],
      [`${publicPath}/`, { headers: { 'content-type': 'application/json' }, body: '{}' }],
      [publicPath, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' }],
      [publicPath, { method: 'GET' }],
    ] as [string, Call][]) {
      const r = await send(path, call);
      expect([r.status, r.body]).toEqual([404, '{"detail":"Not Found"}']);
    }
    // Other types keep Fastify's answers: text/plain has its default parser (then a string is no object), a
    // JSON-like type has none.
    for (const type of ['text/plain', 'application/json-patch+json', 'application/jsonx', 'application/json, text/plain']) {
      const call = { headers: { 'content-type': type }, body: '{"prompt":"x"}' };
      expect(observable(await send(publicPath, call))).toEqual(observable(await viaFastify(publicPath, call)));
    }
    expect(JSON.parse((await send(publicPath, { headers: { 'content-type': 'text/plain' }, body: 'x' })).body)).toEqual(DICT_TYPE);
    expect((await send(publicPath, { headers: { 'content-type': 'application/json-patch+json' }, body: '{}' })).body).toBe('{"detail":"Unsupported media type"}');
    // A percent-encoded secret is left to find-my-way, which decodes it.
    fastifyHandled.length = 0;
    const encoded = await json(`/wh_%${publicPath.charCodeAt(4).toString(16).toUpperCase()}${publicPath.slice(5)}`, '{"prompt":"encoded"}');
    expect([encoded.status, encoded.body]).toEqual([200, '{"status":"Started"}']);
    expect(fastifyHandled).toEqual(['POST /wh_:secret']);
  });

  it('keeps the timeouts Fastify gives its own server', async () => {
    const own = w.server.api!.server;
    const lane = w.server.webhooks!.server;
    const timeouts = (s: http.Server) => ({ keepAlive: s.keepAliveTimeout, request: s.requestTimeout, socket: s.timeout, headers: s.headersTimeout, perSocket: s.maxRequestsPerSocket });
    expect(timeouts(lane)).toEqual(timeouts(own));
    expect(lane.keepAliveTimeout).toBe(72_000);
    const r = await json(publicPath, '{"prompt":"keep-alive"}');
    expect([r.headers.connection, r.headers['keep-alive']]).toEqual(['keep-alive', 'timeout=72']);
  });
});

describe('isPublicPath', () => {
  // The lane takes exactly the paths this pattern matches; anything else goes to find-my-way.
  const PATTERN = /^\/wh_[A-Za-z0-9_-]{1,100}$/;

  it('takes exactly the paths the /wh_<1-100 URL-safe characters> pattern matches', () => {
    const fixed = ['/wh_', '/wh_a', '/wh_' + 'a'.repeat(100), '/wh_' + 'a'.repeat(101), '/wh_a/', '/wh_a%41', '/wh_a.b', '/wh_a~', '/WH_a',
      '/wh-a', 'wh_a', '/wh_a b', '/wh_Z9_-', '/wh_\u00e9', '/wh_a\u0000', '/wh_@', '/wh_[', '/wh_`', '/wh_{', '/wh_/', '/wh_:', '/', ''];
    for (const p of fixed) expect(isPublicPath(p), p).toBe(PATTERN.test(p));
    // Every single character after the prefix, and random paths around the length limits.
    for (let c = 0; c < 0x180; c++) {
      const p = '/wh_x' + String.fromCharCode(c);
      expect(isPublicPath(p), `char ${c}`).toBe(PATTERN.test(p));
    }
    const alphabet = 'aZ09_-./%~ \u00ff';
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let i = 0; i < 2000; i++) {
      let p = rand(10) === 0 ? '/wh' : '/wh_';
      for (let n = rand(106); n > 0; n--) p += alphabet[rand(alphabet.length)];
      expect(isPublicPath(p), p).toBe(PATTERN.test(p));
    }
  });
});
