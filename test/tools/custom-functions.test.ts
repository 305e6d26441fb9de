import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

const ADD = `async function run(args) {
  console.log('adding', args.a, args.b);
  return { sum: args.a + args.b };
}`;

describe.each(TEST_DBS)('custom functions (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  const create = (body: Record<string, unknown>) => t.req('POST', '/v1/custom_functions', body);

  it('creates, analyses, lists, updates, executes and deletes a function', async () => {
    const schema = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };
    const r = await create({ name: 'add', description: 'Adds two numbers', code: ADD, input_schema: schema });
    expect(r.statusCode).toBe(201);
    const f = r.json();
    expect(f).toMatchObject({ name: 'add', status: 'ready', analysis_error_details: null, input_schema: schema, language: 'javascript' });

    const list = await t.req('GET', '/v1/custom_functions?per_page=50');
    expect(list.json().items.map((x: { id: string }) => x.id)).toContain(f.id);

    const ex = await t.req('POST', `/v1/custom_functions/${f.id}/execute`, { args: { a: 2, b: 40 } });
    expect(ex.statusCode).toBe(200);
    expect(ex.json()).toMatchObject({ status: 'success', result: { sum: 42 }, error: null, logs: ['[log] adding 2 40'] });

    const bad = await t.req('POST', `/v1/custom_functions/${f.id}/execute`, { args: { a: 'x' } });
    expect(bad.statusCode).toBe(422);
    const locs = bad.json().detail.map((d: { loc: unknown[] }) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.args.a', 'body.args.b']));

    const patched = await t.req('PATCH', `/v1/custom_functions/${f.id}`, { code: 'async function run(args) { return args.a * args.b }' });
    expect(patched.json()).toMatchObject({ status: 'ready', name: 'add' });
    const ex2 = await t.req('POST', `/v1/custom_functions/${f.id}/execute`, { args: { a: 6, b: 7 } });
    expect(ex2.json().result).toBe(42);

    expect((await t.req('DELETE', `/v1/custom_functions/${f.id}`)).statusCode).toBe(204);
    expect((await t.req('GET', `/v1/custom_functions/${f.id}`)).statusCode).toBe(404);
  });

  it('marks code with a syntax error or without run() as error, with the reason', async () => {
    const syntax = (await create({ name: 'broken', code: 'async function run(args { return 1 }' })).json();
    expect(syntax.status).toBe('error');
    expect(syntax.analysis_error_details).toMatch(/^Syntax error: SyntaxError/);
    const norun = (await create({ name: 'norun', code: 'const x = 1;' })).json();
    expect(norun).toMatchObject({ status: 'error', analysis_error_details: 'The code must define `async function run(args)`' });
    const ex = await t.req('POST', `/v1/custom_functions/${norun.id}/execute`, {});
    expect(ex.statusCode).toBe(409);
    expect(ex.json().detail).toMatch(/not ready/);
    // Fixing the code makes it ready.
    const fixed = await t.req('PATCH', `/v1/custom_functions/${norun.id}`, { code: 'const run = async () => "ok";' });
    expect(fixed.json().status).toBe('ready');
  });

  it('refuses bad input without creating anything', async () => {
    const before = (await t.req('GET', '/v1/custom_functions')).json().total;
    const r = await create({ name: '', code: ADD, input_schema: { type: 'string' }, extra: 1 });
    expect(r.statusCode).toBe(422);
    const r2 = await create({ name: 'x', code: ADD, input_schema: { type: 'string' } });
    expect(r2.statusCode).toBe(422);
    expect(r2.json().detail[0].loc).toEqual(['body', 'input_schema']);
    expect((await t.req('GET', '/v1/custom_functions')).json().total).toBe(before);
  });

  it('has no host objects: require, fetch and process are absent', async () => {
    for (const expr of ['require("fs")', 'await fetch("http://127.0.0.1/")', 'process.env']) {
      const f = (await create({ name: 'escape', code: `async function run() { return ${expr}; }` })).json();
      expect(f.status).toBe('ready');
      const ex = (await t.req('POST', `/v1/custom_functions/${f.id}/execute`, {})).json();
      expect(ex.status).toBe('error');
      expect(ex.error_kind).toBe('runtime');
      expect(ex.error).toMatch(/ReferenceError: '(require|fetch|process)' is not defined/);
    }
  });

  it('stops an endless loop and unbounded allocation while other requests are served', async () => {
    const loop = (await create({ name: 'loop', code: 'async function run() { for (;;) {} }' })).json();
    const hog = (await create({ name: 'hog', code: 'async function run() { const xs = []; for (;;) xs.push(new Array(10000).fill(1)); }' })).json();
    const ok = (await create({ name: 'ok', code: 'async function run(a) { return a.n + 1 }' })).json();
    const looping = t.req('POST', `/v1/custom_functions/${loop.id}/execute`, {});
    const hogging = t.req('POST', `/v1/custom_functions/${hog.id}/execute`, {});
    // While both run, the API answers (the sandbox lives on worker threads) ...
    const listed = await t.req('GET', '/v1/custom_functions');
    expect(listed.statusCode).toBe(200);
    const [l, h] = await Promise.all([looping, hogging]);
    expect(l.json()).toMatchObject({ status: 'error', error_kind: 'timeout' });
    // Stopped by whichever limit it meets first (see test/tools/sandbox.test.ts).
    expect(h.json()).toMatchObject({ status: 'error', error_kind: expect.stringMatching(/^(memory|timeout)$/) });
    // ... and the sandbox keeps working afterwards.
    const after = await t.req('POST', `/v1/custom_functions/${ok.id}/execute`, { args: { n: 1 } });
    expect(after.json()).toMatchObject({ status: 'success', result: 2 });
  });

  it('answers 404 for another organization', async () => {
    const f = (await create({ name: 'mine', code: ADD })).json();
    const other = { 'x-api-key': t.keyB };
    expect((await t.req('GET', `/v1/custom_functions/${f.id}`, undefined, other)).json()).toEqual({ detail: 'Custom function not found' });
    expect((await t.req('POST', `/v1/custom_functions/${f.id}/execute`, {}, other)).statusCode).toBe(404);
    expect((await t.req('PATCH', `/v1/custom_functions/${f.id}`, { name: 'x' }, other)).statusCode).toBe(404);
    expect((await t.req('DELETE', `/v1/custom_functions/${f.id}`, undefined, other)).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/custom_functions/${f.id}`)).statusCode).toBe(200);
  });
});
