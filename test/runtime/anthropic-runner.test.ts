import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../fakes/anthropic-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { eventsOf, makeRuntime, openaiAgent, runOnce, testToolProvider } from './runtime-helpers.js';

describe('agent runner over the Anthropic Messages API', () => {
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startAnthropicServer();
  });
  afterAll(async () => llm?.close());
  beforeEach(() => {
    llm.requests.length = 0;
  });

  const agent = (overrides: Record<string, unknown> = {}) =>
    openaiAgent(llm.baseUrl, { model_provider: 'anthropic', model_name: 'claude-test', ...overrides });

  it('answers with the system prompt, key and headers of the agent', async () => {
    const rt = makeRuntime();
    llm.reply({ text: 'Bonjour! It is mild in Paris.', usage: { prompt_tokens: 31, completion_tokens: 9 } });
    const rec = await runOnce(rt, { agent: agent({ llm_extra_headers: { 'x-trace': 't-1' } }) });
    expect(rec.outcome).toMatchObject({
      status: 'completed',
      result: 'Bonjour! It is mild in Paris.',
      tokens: { prompt_tokens: 31, completion_tokens: 9, total_tokens: 40 },
      llm_model_provider: 'anthropic',
      llm_model_name: 'claude-test',
    });
    const req = llm.requests[0];
    expect(req.path).toBe('/v1/messages');
    expect(req.stream).toBe(true);
    expect(req.headers['x-api-key']).toBe('sk-agent-key');
    expect(req.headers['x-trace']).toBe('t-1');
    expect(req.system).toContain('You are a meteorologist');
    expect(req.lastUserText).toBe('What is the weather in Paris?');
    expect(eventsOf(rec, 'chunk').map((c) => c.text).join('')).toBe('Bonjour! It is mild in Paris.');
  });

  it('runs a tool call through tool_use and tool_result blocks', async () => {
    const rt = makeRuntime();
    rt.tools.register('custom_function', testToolProvider({ get_weather: { run: (a) => `cloudy in ${String(a.city)}` } }));
    llm.reply({ text: 'Let me check.', toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } }] }, { text: 'It is cloudy in Paris.' });
    const rec = await runOnce(rt, { agent: agent({ graph: [{ item_id: 'get_weather', type: 'tool', sub_type: 'test', targets: [] }] }) });
    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'It is cloudy in Paris.', tokens: { total_tokens: 30 } });
    expect(llm.requests[0].tools).toEqual(['get_weather']);
    const last = llm.requests[1].body.messages.at(-1);
    expect(last.role).toBe('user');
    expect(last.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1' });
    expect(JSON.stringify(last.content[0].content ?? '')).toContain('cloudy in Paris');
    expect(eventsOf(rec, 'tool_call_result')[0]).toMatchObject({ tool_name: 'get_weather', result: 'cloudy in Paris', is_error: false });
  });

  it('retries an overloaded answer and reports a persistent one', async () => {
    const rt = makeRuntime();
    llm.reply({ status: 529, error: 'Overloaded', headers: { 'retry-after': '0' } }, { text: 'Fine now.' });
    const ok = await runOnce(rt, { agent: agent() });
    expect(ok.outcome).toMatchObject({ status: 'completed', result: 'Fine now.' });

    llm.reply(...[1, 2, 3].map(() => ({ status: 529, error: 'Overloaded', headers: { 'retry-after': '0' } })));
    const bad = await runOnce(rt, { agent: agent() });
    expect(bad.outcome!.status).toBe('error');
    expect(bad.outcome!.result).toContain('"anthropic"');
    expect(bad.outcome!.result).toContain('Overloaded');
  });
});
