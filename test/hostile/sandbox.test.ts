import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HARD_KILL_GRACE_MS, SandboxPool } from '../../src/custom-functions/sandbox.js';
import { DEFAULT_MAX_ATTEMPTS, MAX_RETRIES, taskStrategies } from '../../src/tasks/task-agents.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/**
 * Custom-function code that attacks the sandbox's own wrapper, the host's handling of its result, or other tenants'
 * share of the threads. Every trick must end as a failure of that one call, within the deadline, with the process
 * alive and the pool still serving.
 */

const TIMEOUT_MS = 1_000;
const LOOP = 'async function run() { for (;;) {} }';
const pool = new SandboxPool({ size: 1, limits: { timeoutMs: TIMEOUT_MS, memoryBytes: 32 * 1024 * 1024 } });
afterAll(() => pool.close());

const TRICKS: [name: string, code: string, outcome: Record<string, unknown>][] = [
  ['JSON.stringify replaced', 'JSON.stringify = () => "not json{"; async function run() { return { a: 1 } }', { ok: true, result: { a: 1 } }],
  ['JSON.stringify returns a non-string', 'JSON.stringify = () => ({ x: 1 }); async function run() { return [1] }', { ok: true, result: [1] }],
  ['JSON.parse replaced', 'JSON.parse = () => { throw new Error("no") }; async function run(a) { return a.v }', { ok: true, result: 7 }],
  ['JSON replaced whole', 'globalThis.JSON = undefined; async function run() { return "x" }', { ok: true, result: 'x' }],
  ['String replaced', 'String = () => { throw 1 }; async function run() { console.log({ a: 1 }); return 1 }', { ok: true, result: 1, logs: ['[log] {"a":1}'] }],
  ['Promise.prototype.then replaced', 'Promise.prototype.then = function () {}; async function run() { return 2 }', { ok: true, result: 2 }],
  ['Object.prototype.then (thenable results)', 'Object.prototype.then = function () {}; async function run() { return 3 }', { ok: true, result: 3 }],
  ['prototype pollution', 'Object.prototype.polluted = 1; Array.prototype.push = null; async function run() { return { ok: ({}).polluted } }', { ok: true, result: { ok: 1 } }],
  ['toJSON returns a function', 'async function run() { return { toJSON() { return () => 1 } } }', { ok: true, result: null }],
  ['getter throws during stringify', 'async function run() { return { get x() { throw new Error("boom") } } }', { ok: false, kind: 'runtime' }],
  ['getter loops during stringify', 'async function run() { return { get x() { for (;;) {} } } }', { ok: false, kind: 'timeout' }],
  ['Proxy result that loops', 'async function run() { return new Proxy({}, { ownKeys() { for (;;) {} } }) }', { ok: false, kind: 'timeout' }],
  ['cyclic result', 'async function run() { const a = {}; a.a = a; return a }', { ok: false, kind: 'runtime' }],
  ['BigInt result', 'async function run() { return 10n }', { ok: false, kind: 'runtime' }],
  ['100k-deep result', 'async function run() { let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a }', { ok: false, kind: expect.stringMatching(/^(limit|memory|timeout)$/) }],
  ['300-deep result', 'async function run() { let a = []; for (let i = 0; i < 300; i++) a = [a]; return a }', { ok: false, kind: 'limit' }],
  ['2 MB result', 'async function run() { return "x".repeat(2e6) }', { ok: false, kind: 'limit' }],
  ['infinite microtasks', 'async function run() { for (;;) await null }', { ok: false, kind: 'timeout' }],
  ['promise chain that never ends', 'async function run() { const f = () => Promise.resolve().then(f); f(); return new Promise(() => {}) }', { ok: false, kind: expect.stringMatching(/^(timeout|memory|runtime)$/) }],
  ['throws an error whose message getter throws', 'async function run() { const e = new Error(); Object.defineProperty(e, "message", { get() { throw 1 } }); throw e }', { ok: false, kind: 'runtime' }],
  ['throws an error whose message getter loops', 'async function run() { const e = new Error(); Object.defineProperty(e, "message", { get() { for (;;) {} } }); throw e }', { ok: false }],
  ['throws a Proxy', 'async function run() { throw new Proxy({}, { get() { throw 1 }, ownKeys() { throw 2 } }) }', { ok: false, kind: 'runtime' }],
  ['throws a huge string', 'async function run() { throw "x".repeat(5e6) }', { ok: false }],
  ['throws null', 'async function run() { throw null }', { ok: false }],
  ['console.log of hostile objects', 'async function run() { console.log(new Proxy({}, { ownKeys() { throw 1 }, get() { throw 2 } }), { toJSON() { throw 3 } }, Symbol("s"), 1n, "x".repeat(1e6)); return 1 }', { ok: true, result: 1 }],
  ['console replaced', 'console.log = null; globalThis.console = 5; async function run() { return 1 }', { ok: true, result: 1 }],
  ['getter on run', 'Object.defineProperty(globalThis, "run", { get() { for (;;) {} } })', { ok: false, kind: 'timeout' }],
  ['run is not a function', 'var run = 5', { ok: false, kind: 'invalid' }],
  ['while(true) at load', 'while (true) {} async function run() {}', { ok: false, kind: 'timeout' }],
];

describe('sandbox tricks', () => {
  it.each(TRICKS)('%s: ends as an outcome of that call', async (_name, code, outcome) => {
    const started = Date.now();
    const r = await pool.run('org-a', code, { v: 7 });
    expect(r, JSON.stringify(r).slice(0, 300)).toMatchObject(outcome);
    if (!r.ok) expect(r.error).toEqual(expect.any(String));
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + HARD_KILL_GRACE_MS + 1_000);
    // The same thread (or its replacement) still serves a normal function.
    expect(await pool.run('org-a', 'async function run(a) { return a.v + 1 }', { v: 1 })).toMatchObject({ ok: true, result: 2 });
  });

  it('bounds what a function logs', async () => {
    const r = await pool.run('org-a', 'async function run() { for (let i = 0; i < 1000; i++) console.log("y".repeat(5000)); return 1 }', {});
    expect(r).toMatchObject({ ok: true, result: 1 });
    expect(r.logs.length).toBeLessThanOrEqual(100);
    for (const line of r.logs) expect(line.length).toBeLessThanOrEqual(2_000);
  });

  it('leaves the process alive and its event loop responsive', async () => {
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(Date.now()), 20);
    try {
      await Promise.all([pool.run('org-a', 'async function run() { for (;;) {} }', {}), pool.run('org-b', 'JSON.stringify = () => "{"; async function run() { return 1 }', {})]);
    } finally {
      clearInterval(timer);
    }
    expect(ticks.length).toBeGreaterThan(10);
    expect(process.exitCode ?? 0).toBe(0);
  });
});

describe('fair sharing between organizations', () => {
  // One thread: the worst case for sharing. 20 functions of org A each run until their deadline.
  const timeoutMs = 300;
  const bound = timeoutMs + HARD_KILL_GRACE_MS;

  it(`starts another organization's call within one job's deadline + grace (${bound} ms) whatever one tenant queued`, async () => {
    const fair = new SandboxPool({ size: 1, limits: { timeoutMs }, maxQueuePerOrg: 100 });
    try {
      const flood = Array.from({ length: 20 }, () => fair.run('org-a', LOOP, {}));
      await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      const b = await fair.run('org-b', 'async function run() { return "b" }', {});
      const waited = Date.now() - started;
      expect(b).toMatchObject({ ok: true, result: 'b' });
      expect(waited).toBeLessThan(bound);
      // Org A's calls all end as timeouts, none is lost.
      const results = await Promise.all(flood);
      expect(results.every((r) => !r.ok && r.kind === 'timeout')).toBe(true);
    } finally {
      await fair.close();
    }
  }, 30_000);

  it('refuses one organization beyond its queue cap as busy, without affecting another', async () => {
    const fair = new SandboxPool({ size: 1, limits: { timeoutMs: 200 }, maxQueuePerOrg: 3 });
    try {
      const a = Array.from({ length: 6 }, () => fair.run('org-a', LOOP, {}));
      const refused = await Promise.race([a[5], new Promise((r) => setTimeout(() => r('pending'), 100))]);
      expect(refused).toMatchObject({ ok: false, kind: 'busy' });
      expect(await fair.run('org-b', 'async function run() { return 1 }', {})).toMatchObject({ ok: true, result: 1 });
      const all = await Promise.all(a);
      // One running + three queued were accepted; the other two were refused at once.
      expect(all.filter((r) => !r.ok && r.kind === 'busy')).toHaveLength(2);
    } finally {
      await fair.close();
    }
  }, 30_000);

  it('keeps a thread for other organizations when the pool has several', async () => {
    const fair = new SandboxPool({ size: 2, limits: { timeoutMs: 2_000 } });
    try {
      const flood = Array.from({ length: 4 }, () => fair.run('org-a', LOOP, {}));
      await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      expect(await fair.run('org-b', 'async function run() { return 1 }', {})).toMatchObject({ ok: true, result: 1 });
      // Org A may hold one of the two threads only: org B did not wait for any of A's 2 s deadlines.
      expect(Date.now() - started).toBeLessThan(1_500);
      await Promise.all(flood);
    } finally {
      await fair.close();
    }
  }, 30_000);
});

describe('a call stopped from outside', () => {
  it('hands the next queued call a fresh thread, not the one being torn down', async () => {
    const one = new SandboxPool({ size: 1, limits: { timeoutMs: 3_000 } });
    try {
      const stop = new AbortController();
      const looping = one.run('org-a', LOOP, {}, stop.signal);
      const next = one.run('org-b', 'async function run() { return 1 }', {});
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      stop.abort();
      expect(await looping).toMatchObject({ ok: false, kind: 'cancelled' });
      // Before: the next call was posted to the cancelled call's thread, then lost with it, and ended as a timeout
      // after the whole deadline and grace.
      expect(await next).toMatchObject({ ok: true, result: 1 });
      expect(Date.now() - started).toBeLessThan(2_500);
    } finally {
      await one.close();
    }
  }, 30_000);
});

describe('a task that kills its worker', () => {
  it('is claimed a bounded number of times, whatever retries the agent asks for', () => {
    // Each claim counts an attempt (a crash is not refunded); past max_attempts the sweep ends the task as error.
    const asked = { task_level_strategies: { retry_strategy: { enabled: true, max_retries: 1_000_000_000 } } };
    expect(taskStrategies(asked).maxAttempts).toBe(1 + MAX_RETRIES);
    expect(taskStrategies({}).maxAttempts).toBe(DEFAULT_MAX_ATTEMPTS);
  });
});

describe.each(TEST_DBS)('hostile custom functions through the API (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('answers each trick as a result of that call and keeps serving', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['JSON.stringify = () => "not json{"; async function run() { return { a: 1 } }', { status: 'success', result: { a: 1 } }],
      ['async function run() { return { get x() { throw new Error("boom") } } }', { status: 'error', error_kind: 'runtime' }],
      ['async function run() { return "x".repeat(2e6) }', { status: 'error', error_kind: 'limit' }],
    ];
    for (const [code, expected] of cases) {
      const f = (await t.req('POST', '/v1/custom_functions', { name: 'trick', code })).json();
      expect(f.status).toBe('ready');
      const ex = await t.req('POST', `/v1/custom_functions/${f.id}/execute`, {});
      expect(ex.statusCode).toBe(200);
      expect(ex.json()).toMatchObject(expected);
    }
    expect((await t.req('GET', '/v1/custom_functions')).statusCode).toBe(200);
  });
});
