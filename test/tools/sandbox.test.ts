import { afterAll, describe, expect, it } from 'vitest';
import { SandboxPool } from '../../src/custom-functions/sandbox.js';

/** The QuickJS pool itself, with small limits (no database). */
describe('custom function sandbox', () => {
  const pool = new SandboxPool({ size: 1, limits: { timeoutMs: 1_000, memoryBytes: 16 * 1024 * 1024 } });
  afterAll(() => pool.close());

  it('passes JSON arguments in and the JSON result out', async () => {
    const r = await pool.run('org', 'async function run(a) { return { list: a.xs.map((x) => x * 2), none: undefined, nested: { ok: true } } }', { xs: [1, 2] });
    expect(r).toEqual({ ok: true, result: { list: [2, 4], nested: { ok: true } }, logs: [] });
  });

  it('refuses what escapes the sandbox or its limits, and keeps serving', async () => {
    // Unbounded allocation is stopped by whichever limit it reaches first: near the memory limit QuickJS collects
    // garbage on every allocation, so a steady allocator often meets the deadline before the limit.
    const cases: [string, string | RegExp][] = [
      ['async function run() { for (;;) {} }', 'timeout'],
      ['async function run() { const xs = []; for (;;) xs.push(new Array(10000).fill(1)); }', /^(memory|timeout)$/],
      ['async function run() { let s = "x"; for (;;) s += s; }', 'runtime'],
      ['async function run() { return new Promise(() => {}) }', 'runtime'],
      ['async function run() { return typeof require + typeof process + typeof fetch + typeof setTimeout }', 'ok'],
    ];
    for (const [code, kind] of cases) {
      const r = await pool.run('org', code, {});
      if (kind === 'ok') expect(r).toMatchObject({ ok: true, result: 'undefinedundefinedundefinedundefined' });
      else expect(r, code).toMatchObject({ ok: false, kind: typeof kind === 'string' ? kind : expect.stringMatching(kind) });
    }
    expect(await pool.run('org', 'async function run() { return 1 }', {})).toMatchObject({ ok: true, result: 1 });
  });

  it('stops what outgrows the memory limit as memory, however slow the machine', async () => {
    // A deadline far away: on a loaded machine a 1 s one was sometimes met before the memory limit.
    const roomy = new SandboxPool({ size: 1, limits: { timeoutMs: 60_000, memoryBytes: 16 * 1024 * 1024 } });
    try {
      for (const code of [
        'async function run() { return new ArrayBuffer(500e6).byteLength }',
        'async function run() { return [...Array(3e7).keys()].length }',
        'function f() { return f() } async function run() { return f() }',
      ]) {
        expect(await roomy.run('org', code, {}), code).toMatchObject({ ok: false, kind: 'memory' });
      }
      expect(await roomy.run('org', 'async function run() { return 1 }', {})).toMatchObject({ ok: true, result: 1 });
    } finally {
      await roomy.close();
    }
  });

  it('cancels a running call and a queued one, freeing the thread', async () => {
    const slow = new SandboxPool({ size: 1, limits: { timeoutMs: 60_000 } });
    try {
      const running = new AbortController();
      const queued = new AbortController();
      const first = slow.run('org', 'async function run() { for (;;) {} }', {}, running.signal);
      const second = slow.run('org', 'async function run() { return 2 }', {}, queued.signal);
      queued.abort();
      expect(await second).toMatchObject({ ok: false, kind: 'cancelled' });
      running.abort();
      expect(await first).toMatchObject({ ok: false, kind: 'cancelled' });
      expect(await slow.run('org', 'async function run() { return 3 }', {})).toMatchObject({ ok: true, result: 3 });
    } finally {
      await slow.close();
    }
  });
});
