import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from './support/harness.js';

describe.each(TEST_DBS)('system endpoints (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
    // Routes that fail the way a bug or a plugin would, registered before the app is ready.
    t.app.get('/test-only/bug', async () => {
      throw new Error('connection string postgres://user:secret@db and a stack');
    });
    t.app.get('/test-only/plugin-405', async () => {
      throw Object.assign(new Error('plugin internals'), { statusCode: 405 });
    });
  });
  afterAll(async () => t?.close());

  it('GET /health answers "ok" without a key', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/health' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toBe('ok');
  });

  it('GET /openapi.json documents the API with version 0.001', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(r.statusCode).toBe(200);
    const doc = r.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.001');
    expect(doc.paths['/health']).toBeDefined();
  });

  it('an unexpected error answers 500 with the request id and nothing internal', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/test-only/bug' });
    expect(r.statusCode).toBe(500);
    const body = r.json();
    expect(body).toEqual({ detail: 'Internal server error', request_id: r.headers['x-request-id'] });
    expect(r.body).not.toContain('secret');
  });

  it("a plugin's client error keeps its status with the standard reason, not its message", async () => {
    const r = await t.app.inject({ method: 'GET', url: '/test-only/plugin-405' });
    expect(r.statusCode).toBe(405);
    expect(r.json()).toEqual({ detail: 'Method Not Allowed' });
  });

  it('malformed JSON is a 422 json_invalid; an empty JSON body counts as no body', async () => {
    const bad = await t.req('POST', '/v1/agents', '{"name": ');
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
    const empty = await t.app.inject({ method: 'POST', url: '/v1/agents', headers: { 'x-api-key': t.keyA, 'content-type': 'application/json' } });
    expect(empty.statusCode).toBe(422);
    expect(empty.json().detail[0]).toMatchObject({ loc: ['body'], type: 'missing' });
  });

  it('unknown routes answer 404 in the contract shape', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ detail: 'Not Found' });
  });
});
