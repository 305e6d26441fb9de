import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCatalog, defaultModel, LLM_MODEL_PROVIDERS, MODEL_CATALOG, resolveModel } from '../../src/llm/model-catalog.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { expectIssue } from './support.js';

describe('model catalog', () => {
  it('covers every LLMModelProvider value of spec 2.2 consistently', () => {
    expect(Object.keys(MODEL_CATALOG).sort()).toEqual([...LLM_MODEL_PROVIDERS].sort());
    expect(checkCatalog(MODEL_CATALOG)).toEqual([]);
  });

  it('resolves defaults and deprecated models', () => {
    expect(defaultModel('anthropic')).toBe('claude-sonnet-4-5');
    expect(resolveModel('anthropic', undefined)).toBe('claude-sonnet-4-5');
    expect(resolveModel('anthropic', 'claude-3-opus-latest')).toBe('claude-opus-4-1');
    expect(resolveModel('openai', 'gpt-4o')).toBe('gpt-4.1');
    expect(resolveModel('openai', 'custom-model')).toBe('custom-model');
    for (const p of LLM_MODEL_PROVIDERS) {
      for (const m of MODEL_CATALOG[p].models) expect(MODEL_CATALOG[p].models.find((x) => x.model_id === resolveModel(p, m.model_id))?.replaced_by).toBeNull();
    }
  });

  it('rejects an inconsistent catalog', () => {
    const broken = structuredClone(MODEL_CATALOG) as any;
    broken.openai.default_model = 'gpt-4o';
    broken.nim.models[0].replaced_by = 'nowhere';
    delete broken.z_ai;
    expect(checkCatalog(broken)).toEqual(expect.arrayContaining([expect.stringMatching(/openai: default gpt-4o is deprecated/), expect.stringMatching(/nim: .* unknown nowhere/), 'z_ai: missing']));
  });
});

describe.each(TEST_DBS)('LLM providers and organization secrets (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('lists every provider and its models', async () => {
    const r = await t.req('GET', '/v1/misc/llm_providers');
    expect(r.statusCode).toBe(200);
    const providers = r.json();
    expect(providers.map((p: { internal_identifier: string }) => p.internal_identifier)).toEqual([...LLM_MODEL_PROVIDERS]);
    for (const p of providers) expect(p).toEqual({ internal_identifier: expect.any(String), name: expect.any(String), requires_api_key: expect.any(Boolean) });

    const models = (await t.req('GET', '/v1/misc/llm_providers/anthropic/models')).json();
    expect(models).toContainEqual({ model_id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5', tier: 'premium', description: expect.any(String), replaced_by: null });
    expect(models.find((m: { model_id: string }) => m.model_id === 'claude-3-5-sonnet-latest').replaced_by).toBe('claude-sonnet-4-5');
    for (const p of LLM_MODEL_PROVIDERS) expect((await t.req('GET', `/v1/misc/llm_providers/${p}/models`)).json().length).toBeGreaterThan(0);

    const unknown = await t.req('GET', '/v1/misc/llm_providers/acme/models');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: 'Provider not found' });
  });

  it('stores secrets sealed, lists names only, never returns a value', async () => {
    const value = 'sk-ant-' + 'v'.repeat(30);
    const put = await t.req('PUT', '/v1/secrets/ANTHROPIC_TEAM', { value, description: 'team key' });
    expect(put.statusCode).toBe(201);
    expect(put.json()).toEqual({ name: 'ANTHROPIC_TEAM', description: 'team key', created_at: expect.any(String), updated_at: expect.any(String) });
    const again = await t.req('PUT', '/v1/secrets/ANTHROPIC_TEAM', { value: value + '2' });
    expect(again.statusCode).toBe(200);
    expect(again.json().description).toBeNull();

    const list = await t.req('GET', '/v1/secrets');
    expect(list.json()).toMatchObject({ total: 1, items: [{ name: 'ANTHROPIC_TEAM', description: null }] });
    for (const r of [put, again, list, await t.req('GET', '/v1/secrets/ANTHROPIC_TEAM')]) {
      expect(r.body).not.toContain(value);
      expect(r.body).not.toContain('"value"');
    }
    const row = await t.c.db.kysely.selectFrom('org_secrets').select('sealed_value').where('organization_id', '=', t.orgA).executeTakeFirstOrThrow();
    expect(row.sealed_value).not.toContain(value);
    expect(await t.c.secrets.reveal(t.orgA, 'ANTHROPIC_TEAM')).toBe(value + '2');
    expect(await t.c.secrets.reveal(t.orgB, 'ANTHROPIC_TEAM')).toBeUndefined();

    // Another organization neither sees nor deletes it.
    const b = { 'x-api-key': t.keyB };
    expect((await t.req('GET', '/v1/secrets', undefined, b)).json().total).toBe(0);
    expect((await t.req('GET', '/v1/secrets/ANTHROPIC_TEAM', undefined, b)).json()).toEqual({ detail: 'Secret not found' });
    expect((await t.req('DELETE', '/v1/secrets/ANTHROPIC_TEAM', undefined, b)).statusCode).toBe(404);

    expect((await t.req('DELETE', '/v1/secrets/ANTHROPIC_TEAM')).statusCode).toBe(204);
    expect((await t.req('DELETE', '/v1/secrets/ANTHROPIC_TEAM')).statusCode).toBe(404);
    expect(await t.c.secrets.reveal(t.orgA, 'ANTHROPIC_TEAM')).toBeUndefined();
  });

  it('validates secret names and bodies', async () => {
    expectIssue(await t.req('PUT', '/v1/secrets/bad%20name', { value: 'x' }), ['path', 'secret_name'], 'string_pattern_mismatch');
    expectIssue(await t.req('PUT', '/v1/secrets/OK', {}), ['body', 'value'], 'missing');
    expectIssue(await t.req('PUT', '/v1/secrets/OK', { value: '' }), ['body', 'value'], 'string_too_short');
    expectIssue(await t.req('PUT', '/v1/secrets/OK', { value: 'x', extra: 1 }), ['body', 'extra'], 'extra_forbidden');
  });
});
