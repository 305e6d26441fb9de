import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/errors.js';
import { buildWebhookApp } from '../../src/http/webhooks.app.js';
import { publicLookupUnavailable } from '../../src/webhooks/webhook-channels.service.js';
import { TEST_DBS } from '../support/harness.js';
import { api, createAgent, enableWebhook, startWebhookWorld, type WebhookWorld } from './webhook-helpers.js';

/**
 * The contract of the JSON webhook call (`POST /wh_<secret>`, `POST /`), one table run against both of its
 * implementations over real sockets: the fast lane (src/http/webhook-fast-lane.ts, bare node:http) and the Fastify
 * routes alone (`buildWebhookApp(c, { fastLane: false })`). Every row states the answer expected, not merely that
 * the two agree, so a regression in either fails. The lane's own edges that are no row (answering before the body,
 * handing other requests to Fastify, header order on the wire, timeouts) are in webhook-fast-lane.test.ts.
 */
const LIMIT = 64 * 1024;
const STARTED = '{"status":"Started"}';
const INVALID_JSON = { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] };
const DICT_TYPE = { detail: [{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }] };
const PROMPT_MISSING = { detail: [{ loc: ['body', 'prompt'], msg: 'Field required', type: 'missing' }] };
const TOO_LARGE = '{"detail":"Request too large"}';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const OVER_LIMIT = JSON.stringify({ prompt: 'x'.repeat(LIMIT) });
const AT_LIMIT = (() => {
  const empty = JSON.stringify({ prompt: '' });
  return empty.replace('""', `"${'y'.repeat(LIMIT - empty.length)}"`);
})();

/** `{agent}`, `{keyA}` and `{keyB}` in a row's query and headers are filled in with the world's values. */
interface Row {
  name: string;
  /** `public`: the agent's live URL; `dead`: a well-formed public URL that names nothing; `key`: `POST /`. */
  path: 'public' | 'dead' | 'key';
  query?: string;
  /** `content-type: application/json` unless given. */
  headers?: Record<string, string>;
  body: string;
  /** Makes the service fail; undone after the row. */
  arrange?: (w: WebhookWorld) => void;
  expected: {
    status: number;
    /** The exact body text, or (json) its parsed value, matchers allowed. */
    text?: string;
    json?: unknown;
    /** `connection: close` (default: keep-alive). */
    closes?: boolean;
    retryAfter?: string;
    /** An asynchronous call's `x-task-id`, naming the stored task. */
    taskIdHeader?: boolean;
    /** Tasks the call stored (0 or 1). */
    stored: number;
  };
}

const started = { status: 200, text: STARTED, taskIdHeader: true, stored: 1 };
const refused = (status: number, body: string | object, extra: Partial<Row['expected']> = {}): Row['expected'] =>
  typeof body === 'string' ? { status, text: body, stored: 0, ...extra } : { status, json: body, stored: 0, ...extra };

const ROWS: Row[] = [
  // JSON is taken with any parameters and in any case.
  { name: 'public: application/json', path: 'public', body: '{"prompt":"plain"}', expected: started },
  { name: 'public: application/json; charset=utf-8', path: 'public', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"prompt":"charset"}', expected: started },
  { name: 'public: Application/JSON', path: 'public', headers: { 'content-type': 'Application/JSON' }, body: '{"prompt":"case"}', expected: started },
  { name: 'public: APPLICATION/JSON ; Charset="UTF-8"', path: 'public', headers: { 'content-type': 'APPLICATION/JSON ; Charset="UTF-8"' }, body: '{"prompt":"spaced"}', expected: started },
  { name: 'public: the text message is the prompt', path: 'public', body: '{"message":"from message"}', expected: started },
  // No body, an empty or a blank one, is no body.
  { name: 'public: empty body, prompt in the query', path: 'public', query: 'prompt=from+query', body: '', expected: started },
  { name: 'public: blank body, prompt in the query', path: 'public', query: 'prompt=from+query', body: '  \n\t ', expected: started },
  { name: 'key: empty body and no prompt', path: 'key', query: 'agent_id={agent}&x-api-key={keyA}', body: '', expected: refused(422, PROMPT_MISSING) },
  { name: 'key: blank body and no prompt', path: 'key', query: 'agent_id={agent}&x-api-key={keyA}', body: '  \n\t ', expected: refused(422, PROMPT_MISSING) },
  // A body that cannot be parsed closes the connection (the client may still be sending).
  { name: 'public: truncated JSON', path: 'public', body: '{"prompt": ', expected: refused(422, INVALID_JSON, { closes: true }) },
  { name: 'public: not JSON', path: 'public', body: 'nope', expected: refused(422, INVALID_JSON, { closes: true }) },
  { name: 'public: trailing comma', path: 'public', body: '{"prompt": "x",}', expected: refused(422, INVALID_JSON, { closes: true }) },
  { name: 'public: __proto__ is refused', path: 'public', body: '{"prompt":"x","__proto__":{"admin":true}}', expected: refused(422, INVALID_JSON, { closes: true }) },
  {
    name: 'public: JSON nested deeper than the limit',
    path: 'public',
    body: `{"prompt":"x","deep":${'['.repeat(300)}${']'.repeat(300)}}`,
    expected: refused(422, { detail: [{ loc: ['body'], msg: 'JSON nested deeper than 256 levels', type: 'json_invalid' }] }, { closes: true }),
  },
  { name: 'public: constructor is left alone', path: 'public', body: '{"prompt":"x","constructor":{"prototype":{"a":1}}}', expected: started },
  // Valid JSON that is no object.
  { name: 'public: an array', path: 'public', body: '[{"prompt":"x"}]', expected: refused(422, DICT_TYPE) },
  { name: 'public: a string', path: 'public', body: '"x"', expected: refused(422, DICT_TYPE) },
  { name: 'public: a number', path: 'public', body: '42', expected: refused(422, DICT_TYPE) },
  { name: 'public: a boolean', path: 'public', body: 'true', expected: refused(422, DICT_TYPE) },
  // The body limit, declared or counted while reading.
  { name: 'public: over the limit, declared', path: 'public', body: OVER_LIMIT, expected: refused(413, TOO_LARGE, { closes: true }) },
  { name: 'public: over the limit, chunked', path: 'public', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, body: OVER_LIMIT, expected: refused(413, TOO_LARGE, { closes: true }) },
  { name: 'public: exactly at the limit', path: 'public', body: AT_LIMIT, expected: started },
  // Parameters are validated after the body is read.
  {
    name: 'public: a task id too long',
    path: 'public',
    body: JSON.stringify({ prompt: 'x', task_id: 't'.repeat(129) }),
    expected: refused(422, { detail: [{ loc: ['body', 'task_id'], msg: 'Value error, task_id must be 1 to 128 printable characters', type: 'value_error' }] }),
  },
  // Credentials.
  { name: 'public: a URL that names nothing', path: 'dead', body: '{"prompt":"x"}', expected: refused(401, '{"detail":"API key not specified"}') },
  { name: 'key: no key', path: 'key', query: 'agent_id={agent}', body: '{"prompt":"x"}', expected: refused(401, '{"detail":"API key not specified"}') },
  { name: 'key: a wrong key', path: 'key', query: 'agent_id={agent}', headers: { 'x-api-key': 'agk_wrong' }, body: '{"prompt":"x"}', expected: refused(403, '{"detail":"Invalid API key"}') },
  { name: 'key: no agent id', path: 'key', headers: { 'x-api-key': '{keyA}' }, body: '{"prompt":"x"}', expected: refused(400, '{"detail":"agent_id is required"}') },
  { name: "key: another organization's key", path: 'key', query: 'agent_id={agent}', headers: { 'x-api-key': '{keyB}' }, body: '{"prompt":"x"}', expected: refused(403, '{"detail":"Invalid API key"}') },
  // The query string as find-my-way reads it: repeated keys are arrays, the first counts; the header key wins.
  {
    name: 'key: repeated query keys, the first counts',
    path: 'key',
    query: 'agent_id={agent}&agent_id=other&asynchronous=true&asynchronous=false&x-api-key={keyA}&x-api-key=agk_wrong',
    body: '{"prompt":"arrays"}',
    expected: started,
  },
  { name: 'key: the header key wins over a wrong one in the query', path: 'key', query: 'agent_id={agent}&asynchronous=true&x-api-key=agk_wrong', headers: { 'x-api-key': '{keyA}' }, body: '{"prompt":"header"}', expected: started },
  { name: 'key: a wrong header key loses to nothing', path: 'key', query: 'agent_id={agent}&asynchronous=true&x-api-key={keyA}', headers: { 'x-api-key': 'agk_wrong' }, body: '{"prompt":"header"}', expected: refused(403, '{"detail":"Invalid API key"}') },
  { name: 'key: synchronous by default, with a getter', path: 'key', query: 'agent_id={agent}&getter=status', headers: { 'x-api-key': '{keyA}' }, body: '{"prompt":"sync"}', expected: { status: 200, text: '"completed"', stored: 1 } },
  // Failures of the service, mapped as everywhere else.
  {
    name: 'public: the lookup is unavailable',
    path: 'public',
    body: '{"prompt":"x"}',
    arrange: (w) => vi.spyOn(w.server.container.webhooks, 'resolvePublic').mockRejectedValue(publicLookupUnavailable(new Error('db down'))),
    expected: refused(503, '{"detail":"Public webhook lookup temporarily unavailable"}', { retryAfter: '5' }),
  },
  {
    name: 'public: a known error from the service',
    path: 'public',
    body: '{"prompt":"x"}',
    arrange: (w) => vi.spyOn(w.server.container.webhooks, 'invoke').mockRejectedValue(new AppError('conflict', 'Task id already exists')),
    expected: refused(409, '{"detail":"Task id already exists"}'),
  },
  {
    name: 'public: an unknown error',
    path: 'public',
    body: '{"prompt":"x"}',
    arrange: (w) => vi.spyOn(w.server.container.webhooks, 'invoke').mockRejectedValue(new Error('boom')),
    expected: refused(500, { detail: 'Internal server error', request_id: expect.stringMatching(UUID) }),
  },
];

interface Implementation {
  name: string;
  fastLane: boolean;
}

const IMPLEMENTATIONS: Implementation[] = [
  { name: 'the fast lane', fastLane: true },
  { name: 'Fastify alone', fastLane: false },
];

describe.each(TEST_DBS)('webhook call contract (%s)', (kind) => {
  let w: WebhookWorld;
  let agentId: string;
  let publicPath: string;

  beforeAll(async () => {
    w = await startWebhookWorld(kind, { AGENTRY_MAX_BODY_BYTES: String(LIMIT), AGENTRY_MAX_FILE_BYTES: String(LIMIT / 2) });
    w.llm.handle(() => ({ text: 'done' }));
    agentId = await createAgent(w);
    publicPath = new URL(await enableWebhook(w, agentId)).pathname;
  });
  afterAll(async () => {
    await w?.close();
  });

  const storedTasks = async (): Promise<number> => {
    const r = await api(w, 'GET', '/v1/tasks?per_page=1');
    if (r.status !== 200) throw new Error(`tasks: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json.total;
  };
  const fill = (s: string) => s.replaceAll('{agent}', agentId).replaceAll('{keyA}', w.keyA).replaceAll('{keyB}', w.keyB);

  describe.each(IMPLEMENTATIONS)('$name', ({ fastLane }) => {
    let app: FastifyInstance;
    let base: string;
    const keepAlive = new http.Agent({ keepAlive: true });
    /** Every request that reached Fastify: none may when the lane answers, every one when Fastify is alone. */
    const reachedFastify: string[] = [];

    beforeAll(async () => {
      // A listener of its own on the world's container: the same database, services and configuration.
      app = await buildWebhookApp(w.server.container, { fastLane });
      app.addHook('onRequest', async (request) => {
        reachedFastify.push(request.url);
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    });
    afterEach(() => {
      vi.restoreAllMocks();
      reachedFastify.length = 0;
    });
    afterAll(async () => {
      keepAlive.destroy();
      await app?.close();
    });

    const send = (path: string, headers: Record<string, string>, body: string) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const req = http.request(base + path, { method: 'POST', headers, agent: keepAlive }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        });
        req.on('error', reject);
        req.end(body);
      });

    it.each(ROWS)('$name', async (row) => {
      const path = { public: publicPath, dead: `/wh_${'A'.repeat(43)}`, key: '/' }[row.path] + (row.query ? `?${fill(row.query)}` : '');
      const headers = Object.fromEntries(Object.entries({ 'content-type': 'application/json', ...row.headers }).map(([k, v]) => [k, fill(v)]));
      row.arrange?.(w);
      const before = await storedTasks();
      const r = await send(path, headers, row.body);
      const e = row.expected;

      expect(r.status).toBe(e.status);
      if (e.text !== undefined) expect(r.body).toBe(e.text);
      if (e.json !== undefined) expect(JSON.parse(r.body)).toEqual(e.json);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.body)));
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      expect(r.headers.connection).toBe(e.closes ? 'close' : 'keep-alive');
      expect(r.headers['retry-after']).toBe(e.retryAfter);
      if (e.taskIdHeader) expect(r.headers['x-task-id']).toMatch(UUID);
      else expect(r.headers['x-task-id']).toBeUndefined();
      vi.restoreAllMocks();
      expect((await storedTasks()) - before).toBe(e.stored);
      if (e.taskIdHeader) expect((await api(w, 'GET', `/v1/tasks/${r.headers['x-task-id']}`)).status).toBe(200);
      // Which implementation answered.
      expect(reachedFastify).toEqual(fastLane ? [] : [path]);
    });
  });
});
