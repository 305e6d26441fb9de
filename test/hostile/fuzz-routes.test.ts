import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { createTestApp, createTestEnv, startTestServer, TEST_DBS, type TestApp, type TestEnv } from '../support/harness.js';
import { bodyFor, deepJson, pathParam, pick, queryFor, rng, type Rng } from './fuzz-gen.js';

/**
 * Issue 20: no request, however malformed, gets a 5xx. Every operation of /openapi.json is sent a bounded number
 * of generated requests (wrong types, missing fields, huge strings, deep nesting, unicode, nulls, odd numbers,
 * hostile path parameters and query strings, bad content types, empty bodies, arrays for objects, prototype keys)
 * with org A's key, plus an unauthenticated slice; then the webhook listener's routes over a real socket, so the
 * fast lane is exercised too. The seed is fixed (AGENTRY_FUZZ_SEED overrides it) and printed: a failure is
 * reproducible. All failures are collected and reported together.
 */

const SEED = Number(process.env.AGENTRY_FUZZ_SEED ?? 20_2611);
const CASES_PER_OPERATION = 24;
const UNAUTHENTICATED_PER_OPERATION = 3;
/** Whole-run bound (per database); the machine is shared, so generous, but a hang must not pass. */
const BUDGET_MS = 150_000;
/** One request: a route that waits (sync invoke, SSE) is bounded by AGENTRY_SYNC_TIMEOUT_MS below. */
const REQUEST_TIMEOUT_MS = 15_000;

interface Operation {
  method: string;
  path: string;
  params: string[];
  query: string[];
  body?: Record<string, unknown>;
  auth: boolean;
  /** A 5xx the document declares as the operation's answer (501: a route known but deliberately not served). */
  declared5xx: Set<number>;
}

interface Failure {
  method: string;
  url: string;
  label: string;
  status: number | string;
  body: string;
}

function operationsOf(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const parameters = (op.parameters ?? []) as { name: string; in: string }[];
      out.push({
        method: method.toUpperCase(),
        path,
        params: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema,
        auth: Array.isArray(op.security),
        declared5xx: new Set(Object.keys(op.responses ?? {}).map(Number).filter((n) => n >= 500)),
      });
    }
  }
  // Deletions last, so the real resources the other requests name exist while they run.
  return out.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), ms)))]).finally(() => clearTimeout(timer));
}

function report(kind: string, failures: Failure[]): string {
  return (
    `${failures.length} failing request(s) on ${kind} (AGENTRY_FUZZ_SEED=${SEED}):\n` +
    [...failures]
      .sort((a, b) => Number(typeof b.status !== 'number' || b.status >= 500) - Number(typeof a.status !== 'number' || a.status >= 500))
      .slice(0, 60)
      .map((f) => `  ${f.method} ${f.url.slice(0, 200)} [${f.label}] -> ${f.status} ${f.body.slice(0, 300)}`)
      .join('\n')
  );
}

describe.each(TEST_DBS)('route fuzzer over /openapi.json (%s)', (kind) => {
  let t: TestApp;
  const real: Record<string, string[]> = {};

  beforeAll(async () => {
    t = await createTestApp(kind, { env: { AGENTRY_SYNC_TIMEOUT_MS: '300' } });
    // Real resources, so some requests get past the 404s into the services.
    const agent = (await t.req('POST', '/v1/agents', { name: 'fuzz-agent' })).json();
    const kb = (await t.req('POST', '/v1/knowledge', { name: 'fuzz-kb' })).json();
    const doc = {
      openapi: '3.0.3',
      info: { title: 'F', version: '1' },
      servers: [{ url: 'http://127.0.0.1:1' }],
      paths: { '/items/{id}': { get: { operationId: 'getItem', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { '200': { description: 'ok' } } } } },
    };
    const connector = (await t.req('POST', '/v1/connectors', { name: 'fuzz-conn', openapi: doc })).json();
    const connection = (await t.req('POST', `/v1/connectors/${connector.id}/connect`, { name: 'c' })).json();
    const task = (await t.req('POST', `/v1/agents/${agent.id}/invoke/async`, { input: { text: 'hi' } })).json();
    real.agent_id = [agent.id];
    real.kb_id = [kb.id];
    real.connector_id = [connector.id];
    real.connection_id = [connection.id];
    real.operation_id = ['getItem'];
    real.task_id = [task.id];
    real.provider = ['openai'];
    real.version = ['1', '2', 'draft'];
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers no 5xx to any generated request, and is healthy afterwards', async () => {
    console.log(`route fuzzer (${kind}): AGENTRY_FUZZ_SEED=${SEED}`);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(50);
    const r: Rng = rng(SEED);
    const failures: Failure[] = [];
    const started = Date.now();
    let sent = 0;
    const statuses: Record<string, number> = {};

    const send = async (op: Operation, kase: number, headers: Record<string, string>) => {
      const url = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => pathParam(r, real[name] ?? [])) + queryFor(r, op.query);
      const body = op.method === 'GET' || op.method === 'DELETE' ? (r() < 0.1 ? bodyFor(r, op.body, kase) : { label: 'no body' }) : bodyFor(r, op.body, kase);
      const h = { ...headers, ...(body.contentType ? { 'content-type': body.contentType } : {}) };
      sent++;
      const res = await withTimeout(t.app.inject({ method: op.method as 'GET', url, payload: body.payload, headers: h }), REQUEST_TIMEOUT_MS).catch((e: Error) => e);
      if (res === 'timeout') failures.push({ method: op.method, url, label: body.label, status: 'timeout', body: '' });
      else if (res instanceof Error) failures.push({ method: op.method, url, label: body.label, status: 'threw', body: res.message });
      else statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      if (res === 'timeout' || res instanceof Error) return;
      if (res.statusCode >= 500 && !op.declared5xx.has(res.statusCode)) failures.push({ method: op.method, url, label: body.label, status: res.statusCode, body: res.body });
      else if (res.statusCode >= 400 && !res.body.startsWith('{"detail"')) {
        failures.push({ method: op.method, url, label: `${body.label}: error not in the contract's shape`, status: res.statusCode, body: res.body });
      }
    };

    for (const op of ops) {
      for (let k = 0; k < CASES_PER_OPERATION; k++) await send(op, k + Math.floor(r() * 18), { 'x-api-key': t.keyA });
      for (let k = 0; k < UNAUTHENTICATED_PER_OPERATION; k++) {
        await send(op, Math.floor(r() * 18), pick<Record<string, string>>(r, [{}, { 'x-api-key': 'agk_wrong' }, { authorization: 'Bearer e30.e30.x' }, { 'x-api-key': t.keyB }]));
      }
      if (Date.now() - started > BUDGET_MS) {
        failures.push({ method: op.method, url: op.path, label: 'time budget', status: 'over budget', body: `${sent} requests in ${Date.now() - started} ms` });
        break;
      }
    }
    console.log(`route fuzzer (${kind}): ${sent} requests over ${ops.length} operations in ${Date.now() - started} ms; statuses ${JSON.stringify(statuses)}`);

    expect(({} as Record<string, unknown>).polluted, 'prototype polluted').toBeUndefined();
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const after = await t.req('POST', '/v1/agents', { name: 'after-fuzz' });
    expect(after.statusCode, after.body).toBe(201);
    expect(failures.length, report(kind, failures)).toBe(0);
  }, BUDGET_MS + 60_000);
});

describe.each(TEST_DBS)('webhook listener fuzzer over a real socket (%s)', (kind) => {
  let env: TestEnv;
  let server: RunningServer;
  let key: string;
  let agentId: string;
  let publicPath: string;

  beforeAll(async () => {
    env = await createTestEnv(kind, { AGENTRY_SYNC_TIMEOUT_MS: '500' });
    server = await startTestServer(env);
    key = (await server.container.orgs.createApiKey('org-a')).key;
    const api = (method: string, path: string, body?: unknown) =>
      fetch(server.apiUrl + path, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((x) => x.json() as Promise<any>);
    agentId = (await api('POST', '/v1/agents', { name: 'fuzz-hook-agent' })).id;
    publicPath = new URL((await api('POST', `/v1/agents/${agentId}/webhook`)).url).pathname;
  });
  afterAll(async () => {
    await server?.stop();
    await env?.cleanup();
  });

  it('answers no 5xx on the fast lane or the Fastify routes, and is healthy afterwards', async () => {
    console.log(`webhook fuzzer (${kind}): AGENTRY_FUZZ_SEED=${SEED}`);
    const r = rng(SEED + 1);
    const failures: Failure[] = [];
    const started = Date.now();
    const paths = () =>
      pick(r, [
        '/',
        `/?agent_id=${agentId}`,
        `/?agent_id=${agentId}&x-api-key=${key}`,
        `/?agent_id=${pathParam(r, [])}`,
        publicPath,
        `${publicPath}?asynchronous=true`,
        `${publicPath}?${queryFor(r, ['prompt', 'asynchronous', 'getter', 'task_id', 'agent_id']).slice(1)}`,
        `/wh_${pathParam(r, [])}`,
        `/wh_${'z'.repeat(150)}`,
        '/wh_',
        '/%zz',
        '/health',
        `/v1/agents/${agentId}`,
      ]);
    const bodies = (k: number) => {
      const form = new URLSearchParams({ prompt: pick(r, ['hi', '\u0000', 'x'.repeat(10_000)]), asynchronous: pick(r, ['true', 'false', 'x']) });
      const fd = new FormData();
      fd.set('prompt', 'hi');
      fd.set('asynchronous', 'true');
      if (r() < 0.5) fd.append('files', new Blob([pick(r, ['hello', '\u0000\u0001', '%PDF-1.4 garbage'])]), pick(r, ['a.txt', 'b.pdf', 'c.png', '..%2f..%2fx', '']));
      switch (k % 10) {
        case 0:
          return { label: 'json', body: JSON.stringify({ prompt: 'hi', asynchronous: true, agent_id: agentId }), type: 'application/json' };
        case 1:
          return { label: 'json with parameters', body: JSON.stringify({ prompt: 'hi', asynchronous: true }), type: 'application/json; charset=utf-8' };
        case 2:
          return { label: 'deep json (lane)', body: deepJson(5000), type: 'application/json' };
        case 3:
          return { label: 'deep json (fastify)', body: `{"prompt":"x","x":${deepJson(4500)}}`, type: 'application/json; x=1' };
        case 4:
          return { label: 'malformed json', body: pick(r, ['{', '[1', '{"__proto__":{"x":1}}', '\u0000', '"str"', '[]', 'null', '{"prompt":"a\\u0000b","asynchronous":true}', '{"prompt":"\\ud800","asynchronous":false}']), type: 'application/json' };
        case 5:
          return { label: 'form', body: form.toString(), type: 'application/x-www-form-urlencoded' };
        case 6:
          return { label: 'multipart', body: fd, type: undefined };
        case 7:
          return { label: 'broken multipart', body: pick(r, ['garbage', '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx', '--b--']), type: pick(r, ['multipart/form-data', 'multipart/form-data; boundary=b']) };
        case 8:
          return { label: 'odd type', body: 'x', type: pick(r, ['text/plain', 'application/xml', 'application/octet-stream', '', 'application/json\u0000']) };
        default:
          return { label: 'files as urls', body: JSON.stringify({ prompt: 'hi', asynchronous: true, files: ['http://x/%zz', 'http://127.0.0.1:1/a%'] }), type: 'application/json' };
      }
    };
    let sent = 0;
    const statuses: Record<string, number> = {};
    for (let i = 0; i < 160; i++) {
      const path = paths();
      const b = bodies(Math.floor(r() * 10));
      const headers: Record<string, string> = pick<Record<string, string>>(r, [{ 'x-api-key': key }, {}, { 'x-api-key': 'agk_wrong' }]);
      if (b.type !== undefined) {
        // fetch refuses a NUL in a header value: those go without a type.
        if (!b.type.includes('\u0000')) headers['content-type'] = b.type;
      }
      const method = r() < 0.9 ? 'POST' : pick(r, ['GET', 'PUT', 'DELETE']);
      sent++;
      const res = await withTimeout(
        fetch(server.webhookUrl + path, { method, headers, body: method === 'GET' ? undefined : (b.body as BodyInit) }).then(async (x) => ({ status: x.status, text: await x.text(), nosniff: x.headers.get('x-content-type-options') })),
        REQUEST_TIMEOUT_MS,
      ).catch((e: Error) => e);
      if (res === 'timeout') failures.push({ method, url: path, label: b.label, status: 'timeout', body: '' });
      else if (res instanceof Error) failures.push({ method, url: path, label: b.label, status: 'threw', body: String((res as Error).cause ?? res.message) });
      else statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res === 'timeout' || res instanceof Error) continue;
      if (res.status >= 500) failures.push({ method, url: path, label: b.label, status: res.status, body: res.text });
      else if (res.nosniff !== 'nosniff') failures.push({ method, url: path, label: `${b.label}: no nosniff`, status: res.status, body: res.text });
    }
    console.log(`webhook fuzzer (${kind}): ${sent} requests in ${Date.now() - started} ms; statuses ${JSON.stringify(statuses)}`);
    expect((await fetch(server.webhookUrl + '/health')).status).toBe(200);
    expect((await fetch(server.apiUrl + '/health')).status).toBe(200);
    expect(failures.length, report(kind, failures)).toBe(0);
    expect(Date.now() - started).toBeLessThan(BUDGET_MS);
  }, BUDGET_MS + 60_000);
});
