import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM_MODEL_PROVIDERS } from '../../src/llm/model-catalog.js';
import { checkReasoningCatalog } from '../../src/llm/reasoning-effort.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { createAgent, expectIssue } from './support.js';

/**
 * llm_reasoning_effort is accepted where it acts and refused (422 at the field, with the reason) where it cannot
 * (docs/decisions.md#reasoning-effort); the default and null are accepted everywhere.
 */
describe.each(TEST_DBS)('llm_reasoning_effort on agent writes (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  let n = 0;
  const post = (body: Record<string, unknown>) => t.req('POST', '/v1/agents', { name: `effort ${++n}`, ...body });
  const refused = async (body: Record<string, unknown>, why: RegExp) => {
    const r = await post(body);
    expectIssue(r, ['body', 'llm_reasoning_effort'], 'value_error', why);
    expectIssue(r, ['body', 'llm_reasoning_effort'], 'value_error', /^Value error, llm_reasoning_effort '\w+' cannot act: .*; use 'medium' \(the provider's default\) or null$/);
  };

  it('accepts medium and null on every provider, and the values the catalog lists for a model', async () => {
    for (const p of LLM_MODEL_PROVIDERS) {
      expect((await post({ model_provider: p })).statusCode, p).toBe(201);
      expect((await post({ model_provider: p, llm_reasoning_effort: null, llm_api_base: 'https://llm.example.com/v1' })).statusCode, p).toBe(201);
    }
    for (const effort of ['low', 'high', 'xhigh']) {
      expect((await createAgent(t, { model_provider: 'anthropic', llm_reasoning_effort: effort })).llm_reasoning_effort).toBe(effort);
      expect((await createAgent(t, { model_provider: 'gemini', model_name: 'gemini-2.5-pro', llm_reasoning_effort: effort })).llm_reasoning_effort).toBe(effort);
    }
    expect((await createAgent(t, { model_provider: 'openai', model_name: 'gpt-5', llm_reasoning_effort: 'high' })).llm_reasoning_effort).toBe('high');
    // Anthropic and Gemini take a custom base as a proxy of their own protocol: the budget reaches it.
    expect((await post({ model_provider: 'anthropic', llm_api_base: 'https://proxy.example.com/v1', llm_reasoning_effort: 'high' })).statusCode).toBe(201);
    // A deprecated name is replaced first: what is checked is the model that runs.
    expect((await createAgent(t, { model_provider: 'gemini', model_name: 'gemini-1.5-pro', llm_reasoning_effort: 'high' })).model_name).toBe('gemini-2.5-pro');
  });

  it('refuses a non-default effort where it cannot act, saying why', async () => {
    await refused({ model_provider: 'nim', llm_reasoning_effort: 'high' }, /NVIDIA NIM has no reasoning effort setting/);
    await refused({ model_provider: 'openai', model_name: 'gpt-4.1', llm_reasoning_effort: 'low' }, /"gpt-4.1" does not reason/);
    await refused({ model_provider: 'openai', model_name: 'gpt-5', llm_reasoning_effort: 'xhigh' }, /"gpt-5" takes low, high, medium only/);
    await refused({ model_provider: 'openai', model_name: 'gpt-5', llm_api_base: 'https://llm.example.com/v1', llm_reasoning_effort: 'high' }, /custom llm_api_base/);
    await refused({ model_provider: 'anthropic', model_name: 'claude-next', llm_reasoning_effort: 'high' }, /"claude-next" is not in the model catalog/);
    await refused({ model_provider: 'anthropic', llm_reasoning_effort: 'xhigh', deep_planning: true, enforce_deep_planning: true }, /forced tool choice/);
    await refused({ type: 'a2a', connectivity_details: { url: 'https://agent.example.com' }, llm_reasoning_effort: 'high' }, /runs remotely/);
  });

  it('checks the resulting configuration on PATCH: a change of model or provider is refused while the effort cannot act', async () => {
    const a = await createAgent(t, { model_provider: 'anthropic', llm_reasoning_effort: 'high' });
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { model_provider: 'cerebras' }), ['body', 'llm_reasoning_effort'], 'value_error', /Cerebras/);
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { model_name: 'claude-next' }), ['body', 'llm_reasoning_effort'], 'value_error', /not in the model catalog/);
    const ok = await t.req('PATCH', `/v1/agents/${a.id}`, { model_provider: 'cerebras', llm_reasoning_effort: 'medium' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ model_provider: 'cerebras', llm_reasoning_effort: 'medium' });
  });

  it('refuses a PATCH of an agent stored before the refusal until the effort is turned back to the default', async () => {
    const id = await t.createAgent({ model_provider: 'nim' });
    // As stored before this rule existed: an effort the provider ignores.
    const db = t.c.db.kysely;
    const withHigh = (text: string) => JSON.stringify({ ...JSON.parse(text), llm_reasoning_effort: 'high' });
    const row = await db.selectFrom('agents').select(['config']).where('id', '=', id).executeTakeFirstOrThrow();
    await db.updateTable('agents').set({ config: withHigh(row.config) }).where('id', '=', id).execute();
    expect((await t.req('GET', `/v1/agents/${id}`)).json().llm_reasoning_effort).toBe('high');
    expectIssue(await t.req('PATCH', `/v1/agents/${id}`, { description: 'renamed' }), ['body', 'llm_reasoning_effort'], 'value_error', /has no reasoning effort setting/);
    expect((await t.req('PATCH', `/v1/agents/${id}`, { description: 'renamed', llm_reasoning_effort: null })).statusCode).toBe(200);
  });
});

describe('the model catalog declares reasoning per model', () => {
  it('reads every reasoning value as its provider takes it (a level name, or a budget the API accepts)', () => {
    expect(checkReasoningCatalog()).toEqual([]);
  });
});
