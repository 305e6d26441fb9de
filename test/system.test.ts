import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from './support/harness.js';

describe.each(TEST_DBS)('system endpoints (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
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

  it('unknown routes answer 404 in the contract shape', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toEqual({ detail: 'Not Found' });
  });
});
