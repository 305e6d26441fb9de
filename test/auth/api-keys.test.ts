import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContainer, type Container } from '../../src/container.js';
import { buildApiApp } from '../../src/http/api.app.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/**
 * API key management (docs/access.md): `GET/POST/DELETE /v1/api_keys`, admins only; the key is shown once; a revoked
 * key is refused at once by this process and by another process on the same database.
 */
describe.each(TEST_DBS)('API keys (%s)', (kind) => {
  let t: TestApp;
  let other: { c: Container; app: Awaited<ReturnType<typeof buildApiApp>> };
  beforeAll(async () => {
    t = await createTestApp(kind);
    const c = await createContainer(t.config, { log: createLogger('silent') });
    other = { c, app: await buildApiApp(c) };
  });
  afterAll(async () => {
    await other?.app.close();
    await other?.c.close();
    await t?.close();
  });

  const onOther = async (key: string) => (await other.app.inject({ method: 'GET', url: '/v1/agents', headers: { 'x-api-key': key } })).statusCode;
  const here = async (key: string) => (await t.req('GET', '/v1/agents', undefined, { 'x-api-key': key })).statusCode;

  it('creates a key shown once, lists keys without secrets, and defaults to member', async () => {
    const created = await t.req('POST', '/v1/api_keys', { name: 'ci' });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ id: expect.any(String), name: 'ci', role: 'member', active: true, revoked_at: null, key: expect.stringMatching(/^agk_/) });
    // created_by is the authenticated creator, never caller-writable.
    expect(body.created_by).toMatch(/^api_key:/);
    expect(await here(body.key)).toBe(200);
    const list = await t.req('GET', '/v1/api_keys?per_page=50');
    expect(list.statusCode).toBe(200);
    const listed = list.json();
    const { key: _shownOnce, ...shown } = body;
    expect(listed.items.find((k: { id: string }) => k.id === body.id)).toEqual(shown);
    const text = list.body;
    expect(text).not.toContain(body.key);
    expect(text).not.toMatch(/key_hash|lookup/);
    // The organization's keys only.
    const b = (await t.req('GET', '/v1/api_keys?per_page=50', undefined, { 'x-api-key': t.keyB })).json();
    expect(b.items.map((k: { id: string }) => k.id)).not.toContain(body.id);
  });

  it('refuses bad input with 422 and non-admins with 403', async () => {
    const bad = await t.req('POST', '/v1/api_keys', { role: 'owner' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['body', 'role']);
    expect((await t.req('POST', '/v1/api_keys', { extra: 1 })).statusCode).toBe(422);
    const member = (await t.req('POST', '/v1/api_keys', { role: 'member' })).json().key;
    for (const [method, url] of [['GET', '/v1/api_keys'], ['POST', '/v1/api_keys']] as const) {
      const r = await t.req(method, url, method === 'POST' ? { role: 'admin' } : undefined, { 'x-api-key': member });
      expect(r.statusCode).toBe(403);
    }
  });

  it('revokes a key at once, here and on another process', async () => {
    const { id, key } = (await t.req('POST', '/v1/api_keys', { name: 'to revoke', role: 'read-only' })).json();
    expect(await here(key)).toBe(200);
    expect(await onOther(key)).toBe(200);
    const r = await t.req('DELETE', `/v1/api_keys/${id}`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ id, active: false, revoked_at: expect.any(String) });
    expect(await here(key)).toBe(403);
    // The other process learns of it from the database (PostgreSQL: the config notification, shortly after commit).
    const deadline = Date.now() + 5000;
    let last = await onOther(key);
    while (last !== 403 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 10));
      last = await onOther(key);
    }
    expect(last).toBe(403);
    // Idempotent; an unknown id is a 404.
    expect((await t.req('DELETE', `/v1/api_keys/${id}`)).statusCode).toBe(200);
    expect((await t.req('DELETE', '/v1/api_keys/0190f1f0-0000-7000-8000-000000000009')).json()).toEqual({ detail: 'API key not found' });
  });

  it("keeps an organization's last admin key", async () => {
    const solo = await t.c.orgs.createApiKey('solo-org', 'only admin');
    const r = await t.req('DELETE', `/v1/api_keys/${solo.id}`, undefined, { 'x-api-key': solo.key });
    expect(r.statusCode).toBe(409);
    expect(await here(solo.key)).toBe(200);
    // With a second admin, the first can go.
    const second = (await t.req('POST', '/v1/api_keys', { role: 'admin' }, { 'x-api-key': solo.key })).json();
    expect((await t.req('DELETE', `/v1/api_keys/${solo.id}`, undefined, { 'x-api-key': second.key })).statusCode).toBe(200);
    expect(await here(solo.key)).toBe(403);
  });
});
