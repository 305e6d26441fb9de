import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payloadValidator } from '../../src/connectors/invoke/payload-validator.js';
import { SchemaChecker } from '../../src/lib/schema-checker.js';
import { compileSafePattern } from '../../src/lib/safe-regexp.js';
import { JsonSchemaValidator } from '../../src/runtime/json-output.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { worstLoopGap } from '../support/loop-gap.js';

/**
 * Tenant-supplied regular expressions and schemas: a catastrophic pattern must take milliseconds (RE2, linear
 * time) with the right verdict, a huge or deep schema must be refused or skipped before Ajv compiles it, and
 * compiling runs on the schema checker's thread, not the event loop. Timings are asserted loosely (< 1 s, against
 * 23.6 s before) for a noisy machine.
 */

const checker = new SchemaChecker();
// The thread's start (seconds from the sources on a busy machine) is not what the timings below measure.
beforeAll(() => checker.validate('warm-up', 'hint', { type: 'object' }, {}));
afterAll(() => checker.close());

const EVIL = '^(a+)+$';
const EVIL_INPUT = `${'a'.repeat(32)}!`;

function nested(depth: number): Record<string, unknown> {
  let s: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) s = { type: 'object', properties: { a: s } };
  return s;
}

function wide(n: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) properties[`p${i}`] = { type: 'string' };
  return { type: 'object', properties };
}

async function timed<T>(f: () => T | Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const r = await f();
  return [r, performance.now() - started];
}

describe('safe patterns', () => {
  it('match in linear time with ECMAScript search semantics', async () => {
    const [r, ms] = await timed(() => compileSafePattern(EVIL).test(`${'a'.repeat(100_000)}!`));
    expect(r).toBe(false);
    expect(ms).toBeLessThan(1_000);
    expect(compileSafePattern(EVIL).test('aaa')).toBe(true);
    expect(compileSafePattern('b+').test('abbc')).toBe(true);
    expect(compileSafePattern('^\\d{3}-(?<n>\\w+)$').test('123-xy')).toBe(true);
    expect(compileSafePattern('^\\p{L}+$').test('été')).toBe(true);
  });

  it('refuse lookaround and backreferences', () => {
    for (const p of ['(?<=a)b', '(a)\\1', 'a(?=b)', 'a(?!b)']) expect(() => compileSafePattern(p), p).toThrow(/not supported/);
  });
});

describe('agent output_schema', () => {
  const v = new JsonSchemaValidator(checker, 'org-a');

  it('evaluates a catastrophic pattern in milliseconds with the right verdict', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: EVIL } }, patternProperties: { '^(x+)+$': { type: 'number' } } };
    const [bad, ms] = await timed(() => v.validate(schema, { s: EVIL_INPUT, [`${'x'.repeat(40)}!`]: 'n' }));
    expect(ms).toBeLessThan(1_000);
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^\/s must match pattern/);
    expect(await v.validate(schema, { s: 'aaaa', xxx: 1 })).toEqual([]);
    expect(await v.validate(schema, { s: 'aaaa', xxx: 'no' })).toHaveLength(1);
  });

  it('does not enforce a pattern RE2 cannot run, and still enforces the rest', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '(a)\\1' }, n: { type: 'number' } } };
    expect(await v.validate(schema, { s: 'zz', n: 1 })).toEqual([]);
    expect(await v.validate(schema, { s: 'zz', n: 'x' })).toHaveLength(1);
  });

  it('skips a schema too deep or too large to compile, quickly', async () => {
    for (const schema of [nested(3_000), wide(100_000)]) {
      const [r, ms] = await timed(() => v.validate(schema, { a: 1 }));
      expect(r).toEqual([]);
      expect(ms).toBeLessThan(1_000);
    }
  });
});

describe('connector parameter schema', () => {
  it('evaluates a catastrophic pattern in milliseconds with the right verdict', async () => {
    const validate = payloadValidator(checker, 'org-a', { type: 'object', properties: { q: { type: 'string', pattern: EVIL } }, required: ['q'] });
    const [checked, ms] = await timed(() => validate({ q: EVIL_INPUT }));
    expect(ms).toBeLessThan(1_000);
    expect(checked.issues).toEqual([{ loc: ['body', 'q'], msg: `String should match pattern '${EVIL}'`, type: 'string_pattern_mismatch' }]);
    expect((await validate({ q: 'aaa' })).issues).toEqual([]);
  });

  it('hands back the payload as validated, with text scalars coerced', async () => {
    const validate = payloadValidator(checker, 'org-a', { type: 'object', properties: { n: { type: 'integer' }, b: { type: 'boolean' } } });
    expect(await validate({ n: '10', b: 'true' })).toEqual({ issues: [], value: { n: 10, b: true } });
  });

  it('keeps importing documents whose patterns RE2 cannot run (the pattern is not enforced)', async () => {
    const validate = payloadValidator(checker, 'org-a', { type: 'object', properties: { q: { type: 'string', pattern: '(?<=a)b' }, n: { type: 'integer' } } });
    expect((await validate({ q: 'zz' })).issues).toEqual([]);
    expect((await validate({ q: 'zz', n: 'x' })).issues).toHaveLength(1);
  });

  it('falls back to the structural check for a schema too deep or too large, quickly', async () => {
    for (const schema of [{ ...nested(3_000), required: ['a'] }, { ...wide(100_000), required: ['p1'] }]) {
      const [checked, ms] = await timed(() => payloadValidator(checker, 'org-a', schema)({}));
      expect(ms).toBeLessThan(1_000);
      expect(checked.issues).toHaveLength(1);
    }
  });
});

/** A schema of ~1,900 objects and arrays, each property with its own pattern: Ajv needs hundreds of ms for it. */
function heavy(tag: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 600; i++) properties[`${tag}${i}`] = { type: 'object', properties: { a: { type: 'string', pattern: `^${tag}${i}(a+)+$` } } };
  return { type: 'object', properties };
}

describe('the schema checker', () => {
  it('compiles off the event loop: timers keep firing while a large schema compiles', async () => {
    const [verdict, worstGap, ms] = await worstLoopGap(() => checker.validate('org-a', 'hint', heavy('t'), { t0: { a: 'no' } }));
    expect(verdict.kind).toBe('invalid');
    // The compile took long enough that the same work on this thread would have shown as a gap of its length.
    expect(ms).toBeGreaterThan(50);
    expect(worstGap).toBeLessThan(Math.max(50, ms / 2));
  });

  it('stops a job at its deadline, answers it as unusable, and serves the next one on a fresh thread', async () => {
    const quick = new SchemaChecker({ timeoutMs: 100 });
    try {
      // Validating 300,000 strings against a pattern takes seconds, even on RE2.
      const many = Array.from({ length: 300_000 }, () => `${'a'.repeat(30)}!`);
      const slow = await quick.validate('org-a', 'hint', { type: 'array', items: { type: 'string', pattern: EVIL } }, many);
      expect(slow).toMatchObject({ kind: 'unusable', reason: expect.stringMatching(/longer than 100 ms/) });
      const next = await quick.validate('org-a', 'hint', { type: 'integer' }, 'x');
      expect(next.kind).toBe('invalid');
    } finally {
      await quick.close();
    }
  });

  it("serves another organization's schema between a flooding organization's jobs", async () => {
    const order: string[] = [];
    const flood = Array.from({ length: 4 }, (_, i) => checker.validate('org-flood', 'hint', heavy(`f${i}x`), {}).then(() => order.push(`flood${i}`)));
    await checker.validate('org-b', 'hint', { type: 'integer' }, 1).then(() => order.push('b'));
    await Promise.all(flood);
    expect(order.indexOf('b')).toBeLessThanOrEqual(1);
  });
});

describe.each(TEST_DBS)('custom-function input_schema (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('evaluates a catastrophic pattern in milliseconds with the right verdict', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: EVIL } }, required: ['s'] };
    const f = await t.req('POST', '/v1/custom_functions', { name: 'evil', code: 'async function run(a) { return a.s.length }', input_schema: schema });
    expect(f.statusCode).toBe(201);
    const id = f.json().id;
    const [bad, ms] = await timed(() => t.req('POST', `/v1/custom_functions/${id}/execute`, { args: { s: EVIL_INPUT } }));
    expect(ms).toBeLessThan(1_000);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'args', 's']);
    const ok = await t.req('POST', `/v1/custom_functions/${id}/execute`, { args: { s: 'aaaa' } });
    expect(ok.json()).toMatchObject({ status: 'success', result: 4 });
  });

  it('refuses an output_schema pattern that could not be enforced, on the agent and on an invocation', async () => {
    const lookahead = { type: 'object', properties: { s: { type: 'string', pattern: 'a(?=b)' } } };
    const agent = await t.req('POST', '/v1/agents', { name: 'lookahead', output_format: 'json', output_schema: lookahead });
    expect(agent.statusCode).toBe(422);
    expect(agent.json().detail[0]).toMatchObject({ loc: ['body', 'output_schema'], msg: expect.stringMatching(/not supported/) });
    const keyed = await t.req('POST', '/v1/agents', { name: 'keyed', output_schema: { type: 'object', patternProperties: { '(a)\\1': {} } } });
    expect(keyed.statusCode).toBe(422);
    const ok = await t.req('POST', '/v1/agents', { name: 'fine', output_format: 'json', output_schema: { type: 'object', properties: { pattern: { type: 'string', pattern: EVIL } } } });
    expect(ok.statusCode, ok.body).toBe(201);
    const invoked = await t.req('POST', `/v1/agents/${ok.json().id}/invoke`, { input: { text: 'x' }, output_schema: lookahead });
    expect(invoked.statusCode).toBe(422);
    expect(invoked.json().detail[0].loc).toEqual(['body', 'output_schema']);
  });

  it('refuses an output_schema the run could not enforce (does not compile): agent create and PATCH, invocations; nothing stored', async () => {
    // The run treats a schema it cannot compile as a hint only: accepted, it was stored and never enforced.
    const before = (await t.req('GET', '/v1/agents?per_page=1')).json().total;
    for (const schema of [{ type: 'strnig' }, { type: 'object', properties: { a: { $ref: 'http://127.0.0.1:1/a.json' } } }, { type: 'object', required: 'a' }]) {
      const r = await t.req('POST', '/v1/agents', { name: `unusable-${JSON.stringify(schema).length}`, output_format: 'json', output_schema: schema });
      expect(r.statusCode, JSON.stringify(schema)).toBe(422);
      expect(r.json().detail[0]).toMatchObject({ loc: ['body', 'output_schema'], type: 'value_error', msg: expect.stringMatching(/output_schema cannot be enforced/) });
    }
    expect((await t.req('GET', '/v1/agents?per_page=1')).json().total).toBe(before);
    const ok = await t.req('POST', '/v1/agents', { name: 'usable-schema', output_format: 'json', output_schema: { type: 'object', properties: { a: { $ref: '#/$defs/a' } }, $defs: { a: { type: 'string' } } } });
    expect(ok.statusCode, ok.body).toBe(201);
    const patched = await t.req('PATCH', `/v1/agents/${ok.json().id}`, { output_schema: { type: 'strnig' } });
    expect(patched.statusCode).toBe(422);
    expect(patched.json().detail[0].loc).toEqual(['body', 'output_schema']);
    expect((await t.req('GET', `/v1/agents/${ok.json().id}`)).json().output_schema.properties.a).toEqual({ $ref: '#/$defs/a' });
    // An invocation's own output_schema too: refused, and no task is created.
    const tasksBefore = (await t.req('GET', `/v1/agents/${ok.json().id}/tasks?per_page=1`)).json().total;
    for (const path of ['invoke', 'invoke/async']) {
      const invoked = await t.req('POST', `/v1/agents/${ok.json().id}/${path}`, { input: { text: 'x' }, output_format: 'json', output_schema: { type: 'strnig' } });
      expect(invoked.statusCode, invoked.body).toBe(422);
      expect(invoked.json().detail[0]).toMatchObject({ loc: ['body', 'output_schema'], msg: expect.stringMatching(/output_schema cannot be enforced/) });
    }
    expect((await t.req('GET', `/v1/agents/${ok.json().id}/tasks?per_page=1`)).json().total).toBe(tasksBefore);
    // And a schedule's invocation, when it is written rather than at every firing.
    const scheduled = await t.req('POST', `/v1/agents/${ok.json().id}/schedules`, { interval_seconds: 3600, enabled: false, invocation: { input: { text: 'x' }, output_schema: { type: 'strnig' } } });
    expect(scheduled.statusCode, scheduled.body).toBe(422);
    expect(scheduled.json().detail[0].loc).toEqual(['body', 'invocation', 'output_schema']);
    expect((await t.req('GET', `/v1/agents/${ok.json().id}/schedules`)).json().total).toBe(0);
  });

  it('refuses a pattern RE2 cannot run, naming the field', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '(a)\\1' } } };
    const r = await t.req('POST', '/v1/custom_functions', { name: 'backref', code: 'async function run() { return 1 }', input_schema: schema });
    expect(r.statusCode).toBe(422);
    expect(r.json().detail[0]).toMatchObject({ loc: ['body', 'input_schema'], msg: expect.stringMatching(/not supported/) });
  });

  it('refuses a schema too deep or too large, quickly, naming the field', async () => {
    for (const schema of [nested(40), wide(5_000)]) {
      const [r, ms] = await timed(() => t.req('POST', '/v1/custom_functions', { name: 'big', code: 'async function run() { return 1 }', input_schema: schema }));
      expect(ms).toBeLessThan(1_000);
      expect(r.statusCode).toBe(422);
      expect(r.json().detail[0]).toMatchObject({ loc: ['body', 'input_schema'], msg: expect.stringMatching(/too large/) });
    }
  });
});
