import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LLM_MODEL_PROVIDERS, PROVIDER_ADAPTERS } from '../../src/llm/llm-providers.js';
import { retryAfterMs } from '../../src/llm/retrying-fetch.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { makeRuntime, openaiAgent, runOnce, secretBox } from './runtime-helpers.js';

describe('LLM credentials and providers', () => {
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    llm.handle(() => ({ text: 'ok' }));
  });
  afterAll(async () => llm?.close());
  beforeEach(() => {
    llm.requests.length = 0;
  });

  it('ends with error naming the provider and what to set when no credentials exist', async () => {
    const rt = makeRuntime();
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { llm_credentials: null }) });
    expect(rec.outcome!.status).toBe('error');
    expect(rec.outcome!.result).toContain('"openai"');
    expect(rec.outcome!.result).toContain('OPENAI_API_KEY');
    expect(rec.outcome!.result).toContain('llm_credentials');
    expect(llm.requests).toHaveLength(0);
  });

  it('names a missing organization secret', async () => {
    const rt = makeRuntime();
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { llm_credentials: null, llm_credentials_key: 'team-openai' }) });
    expect(rec.outcome!.status).toBe('error');
    expect(rec.outcome!.result).toContain('"team-openai"');
  });

  it('ends with error, never with the server key, when the secret named by llm_credentials_key does not exist', async () => {
    const rt = makeRuntime({ env: { OPENAI_API_KEY: 'sk-from-env' } });
    // The provider's own endpoint, where the server key would otherwise be allowed.
    const openaiOwn = openaiAgent('', { llm_api_base: null, llm_credentials: null, llm_credentials_key: 'deleted-secret' });
    await expect(rt.llm.resolve(openaiOwn)).rejects.toThrow('the organization secret "deleted-secret" named by llm_credentials_key does not exist');
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { llm_credentials: null, llm_credentials_key: 'deleted-secret' }) });
    expect(rec.outcome!.status).toBe('error');
    expect(rec.outcome!.result).toContain('PUT /v1/secrets/deleted-secret');
    expect(rec.outcome!.result).not.toContain('sk-from-env');
    expect(llm.requests).toHaveLength(0);
    // Without a key named, the server key still serves the provider's own endpoint.
    expect((await rt.llm.resolve(openaiAgent('', { llm_api_base: null, llm_credentials: null, llm_credentials_key: null }))).credentialSource).toBe('environment');
  });

  it('takes the agent key first, then the organization secret; never the environment for a custom llm_api_base', async () => {
    const rt = makeRuntime({ secrets: { 'team-openai': 'sk-org-secret' }, env: { OPENAI_API_KEY: 'sk-from-env' } });
    await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { llm_credentials_key: 'team-openai' }) });
    await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { llm_credentials: null, llm_credentials_key: 'team-openai' }) });
    const noKey = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { llm_credentials: null, llm_credentials_key: null }) });
    await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { llm_credentials: secretBox.sealJson({ name: 'k', value: 'sk-whole-object' }) }) });
    expect(llm.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-agent-key', 'Bearer sk-org-secret', 'Bearer sk-whole-object']);
    expect(noKey.outcome!.status).toBe('error');
    expect(noKey.outcome!.result).toContain('not the provider\'s own endpoint');
    expect(noKey.outcome!.result).not.toContain('sk-from-env');
  });

  it('never uses the server environment for an agent whose llm_credentials_key_type is custom', async () => {
    const rt = makeRuntime({ secrets: { 'team-openai': 'sk-org-secret' }, env: { OPENAI_API_KEY: 'sk-from-env' } });
    const resolve = (fields: Record<string, unknown>) =>
      rt.llm.resolve(openaiAgent('', { llm_api_base: null, llm_credentials: null, ...fields })).then(
        (r) => r.credentialSource as string,
        (e: Error) => e.message,
      );
    expect(await resolve({ llm_credentials_key_type: 'xpander' })).toBe('environment');
    expect(await resolve({ llm_credentials_key_type: null })).toBe('environment');
    const refused = await resolve({ llm_credentials_key_type: 'custom' });
    expect(refused).toContain('llm_credentials_key_type is "custom"');
    expect(refused).toContain('OPENAI_API_KEY');
    expect(refused).not.toContain('sk-from-env');
    expect(await resolve({ llm_credentials_key_type: 'custom', llm_credentials_key: 'missing' })).toContain('"missing"');
    // Its own key, from either place, is used as for any agent.
    expect(await resolve({ llm_credentials_key_type: 'custom', llm_credentials_key: 'team-openai' })).toBe('organization_secret');
    expect(await resolve({ llm_credentials_key_type: 'custom', llm_credentials: { name: 'k', value: 'sk-own' } })).toBe('agent');
    // And a run of such an agent ends in error without calling the model.
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { llm_api_base: null, llm_credentials: null, llm_credentials_key_type: 'custom' }) });
    expect(rec.outcome!.status).toBe('error');
    expect(rec.outcome!.result).toContain('llm_credentials_key_type');
    expect(llm.requests).toHaveLength(0);
  });

  it('uses the server environment for the provider\'s own endpoint, however its URL is written', async () => {
    const rt = makeRuntime({ env: { OPENAI_API_KEY: 'sk-from-env', ANTHROPIC_API_KEY: 'sk-ant-env', CLOUDFLARE_API_TOKEN: 'cf', CLOUDFLARE_ACCOUNT_ID: 'acc1' } });
    const source = async (fields: Record<string, unknown>) =>
      (await rt.llm.resolve(openaiAgent('', { llm_credentials: null, ...fields })).catch((e: Error) => e)) as { credentialSource?: string; message?: string };
    for (const base of [null, 'https://api.openai.com/v1', 'HTTPS://API.OPENAI.COM:443/v1/', ' https://api.openai.com/v1// ']) {
      expect((await source({ llm_api_base: base })).credentialSource, String(base)).toBe('environment');
    }
    expect((await source({ model_provider: 'anthropic', llm_api_base: 'https://api.anthropic.com' })).credentialSource).toBe('environment');
    expect((await source({ model_provider: 'cloudflare_ai_gw', llm_api_base: null })).credentialSource).toBe('environment');
    // Look-alikes of the official endpoint are custom bases: no server key.
    for (const base of [
      'http://api.openai.com/v1',
      'https://api.openai.com.evil.example/v1',
      'https://user:pw@api.openai.com/v1',
      'https://api.openai.com/v1?x=1',
      'https://api.openai.com/v2',
      'https://api.openai.com:8443/v1',
      llm.baseUrl,
    ]) {
      const r = await source({ llm_api_base: base });
      expect(r.credentialSource, base).toBeUndefined();
      expect(r.message, base).toMatch(/not the provider's own endpoint.*OPENAI_API_KEY.*llm_credentials/);
    }
    // A gateway URL names an account the caller chose.
    const gw = await source({ model_provider: 'cloudflare_ai_gw', llm_api_base: 'https://gateway.ai.cloudflare.com/v1/other/gw/openai' });
    expect(gw.message).toContain('CLOUDFLARE_API_TOKEN');
  });

  it('reaches every OpenAI-compatible provider through its llm_api_base', async () => {
    const compatible = LLM_MODEL_PROVIDERS.filter((p) => !['anthropic', 'gemini', 'google_ai_studio'].includes(p));
    const rt = makeRuntime();
    for (const provider of compatible) {
      const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { model_provider: provider }) });
      expect(rec.outcome, provider).toMatchObject({ status: 'completed', llm_model_provider: provider });
    }
    expect(llm.requests.every((r) => r.path === '/v1/chat/completions')).toBe(true);
    // Azure authenticates keys with its api-key header, the others with a bearer token.
    const azure = llm.requests[compatible.indexOf('azure_ai_foundary')];
    expect(azure.headers['api-key']).toBe('sk-agent-key');
  });

  it('passes llm_reasoning_effort to the official OpenAI endpoint only', async () => {
    const rt = makeRuntime();
    const official = await rt.llm.resolve(openaiAgent(llm.baseUrl, { llm_api_base: null, llm_reasoning_effort: 'high' }));
    expect(official.providerOptions).toEqual({ openai: { reasoningEffort: 'high' } });
    expect(official.customBase).toBe(false);
    const compatible = await rt.llm.resolve(openaiAgent(llm.baseUrl, { llm_reasoning_effort: 'high' }));
    expect(compatible.providerOptions).toBeUndefined();
    expect(compatible.customBase).toBe(true);
  });

  it('follows the model catalog: a missing model_name gets the provider default', async () => {
    const rt = makeRuntime();
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { model_name: null }) });
    expect(rec.outcome!.status).toBe('completed');
    expect(rec.outcome!.llm_model_name).toBeTruthy();
    expect(llm.requests[0].body.model).toBe(rec.outcome!.llm_model_name);
  });

  it('every provider declares the environment variables it reads', () => {
    for (const p of LLM_MODEL_PROVIDERS) expect(PROVIDER_ADAPTERS[p].envKeys.length, p).toBeGreaterThan(0);
  });

  it('explains an endpoint that cannot be completed from the environment', async () => {
    const rt = makeRuntime({ env: { CLOUDFLARE_API_TOKEN: 'cf-token' } });
    const rec = await runOnce(rt, { agent: openaiAgent('', { model_provider: 'cloudflare_ai_gw', llm_api_base: null, llm_credentials: null }) });
    expect(rec.outcome!.status).toBe('error');
    expect(rec.outcome!.result).toContain('CLOUDFLARE_ACCOUNT_ID');
  });

  it('reads Retry-After as seconds, as an HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '150', 'retry-after': '9' }), now)).toBe(150);
    expect(retryAfterMs(new Headers({}), now)).toBeUndefined();
  });
});

describe('the scripted OpenAI server without streaming', () => {
  it('answers chat completions with tool calls and usage as JSON', async () => {
    const llm = await startOpenAIServer();
    try {
      llm.reply({ text: 'calling', toolCalls: [{ id: 'call_9', name: 'lookup', arguments: { q: 'x' } }], usage: { prompt_tokens: 3, completion_tokens: 4 } });
      const res = await fetch(`${llm.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = await res.json();
      expect(body.choices[0]).toMatchObject({
        message: { role: 'assistant', content: 'calling', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
        finish_reason: 'tool_calls',
      });
      expect(body.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
      expect(llm.requests[0]).toMatchObject({ stream: false, lastUserText: 'hi' });
      // an unscripted request fails visibly
      const unscripted = await fetch(`${llm.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [] }) });
      expect(unscripted.status).toBe(500);
    } finally {
      await llm.close();
    }
  });
});
