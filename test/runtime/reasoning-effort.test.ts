import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../fakes/anthropic-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { makeRuntime, openaiAgent, runOnce, testToolProvider } from './runtime-helpers.js';

/**
 * llm_reasoning_effort at run time (docs/decisions.md#reasoning-effort), asserted on what the provider receives:
 * Anthropic's `thinking` and `max_tokens`, Gemini's `generationConfig.thinkingConfig`, OpenAI's `reasoning`.
 * `medium` (every agent's default) and null send nothing extra on budget providers.
 */
describe('llm_reasoning_effort over Anthropic', () => {
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startAnthropicServer();
    llm.handle(() => ({ text: 'ok' }));
  });
  afterAll(async () => llm?.close());
  beforeEach(() => {
    llm.requests.length = 0;
  });

  const agent = (overrides: Record<string, unknown> = {}) => openaiAgent(llm.baseUrl, { model_provider: 'anthropic', model_name: 'claude-sonnet-4-5', ...overrides });
  const bodyOf = async (overrides: Record<string, unknown>) => {
    llm.requests.length = 0;
    const rec = await runOnce(makeRuntime(), { agent: agent(overrides) });
    expect(rec.outcome?.status, JSON.stringify(rec.outcome)).toBe('completed');
    return llm.requests[0]!.body;
  };

  it('sends no thinking for medium and null: the request is the one sent before the setting acted', async () => {
    const medium = await bodyOf({ llm_reasoning_effort: 'medium' });
    const none = await bodyOf({ llm_reasoning_effort: null });
    expect(medium.thinking).toBeUndefined();
    expect(none.thinking).toBeUndefined();
    expect(medium.max_tokens).toBe(none.max_tokens);
  });

  it('maps high and xhigh to a thinking budget under max_tokens, and low to thinking off', async () => {
    const high = await bodyOf({ llm_reasoning_effort: 'high' });
    expect(high.thinking).toEqual({ type: 'enabled', budget_tokens: 16000 });
    expect(high.max_tokens).toBe(64000);
    expect(high.temperature).toBeUndefined();
    const xhigh = await bodyOf({ llm_reasoning_effort: 'xhigh' });
    expect(xhigh.thinking).toEqual({ type: 'enabled', budget_tokens: 32000 });
    expect(xhigh.max_tokens).toBeGreaterThan(32000);
    // Opus 4.1 writes at most 32000 tokens: its xhigh budget leaves room for the answer.
    const opus = await bodyOf({ model_name: 'claude-opus-4-1', llm_reasoning_effort: 'xhigh' });
    expect(opus.thinking).toEqual({ type: 'enabled', budget_tokens: 24000 });
    expect(opus.max_tokens).toBe(32000);
    expect((await bodyOf({ llm_reasoning_effort: 'low' })).thinking).toEqual({ type: 'disabled' });
  });

  it('gives the thinking block and its signature back with the tool result', async () => {
    const rt = makeRuntime();
    rt.tools.register('custom_function', testToolProvider({ get_weather: { run: (a) => `cloudy in ${String(a.city)}` } }));
    llm.reply(
      { thinking: { text: 'The user wants Paris.', signature: 'sig-paris' }, toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { text: 'Cloudy in Paris.' },
    );
    const graph = [{ item_id: 'get_weather', type: 'tool', sub_type: 'test', targets: [] }];
    const rec = await runOnce(rt, { agent: agent({ llm_reasoning_effort: 'high', graph }) });
    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'Cloudy in Paris.' });
    const assistant = llm.requests[1]!.body.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'The user wants Paris.', signature: 'sig-paris' });
    expect(llm.requests[1]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 16000 });
  });

  it('runs an agent stored before its effort was refused without it', async () => {
    // A model the catalog does not know.
    expect((await bodyOf({ model_name: 'claude-test', llm_reasoning_effort: 'high' })).thinking).toBeUndefined();
    // Graph targets force tool choices, which Anthropic refuses with thinking: the chain keeps its forced step.
    const graph = [{ item_id: 'get_weather', type: 'tool', sub_type: 'test', targets: ['get_weather'] }];
    expect((await bodyOf({ llm_reasoning_effort: 'high', graph })).thinking).toBeUndefined();
    expect((await bodyOf({ llm_reasoning_effort: 'xhigh', enforce_deep_planning: true, deep_planning: true })).thinking).toBeUndefined();
  });
});

describe('llm_reasoning_effort over Gemini', () => {
  const chunk = { candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } };
  const recorder = recordingServer((res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify(chunk)}\n\n`);
  });
  const seen = recorder.seen;
  let base: string;
  beforeAll(async () => {
    base = `${await recorder.start()}/v1beta`;
  });
  afterAll(() => recorder.close());

  const configOf = async (provider: string, model: string, effort: string | null) => {
    seen.length = 0;
    const rec = await runOnce(makeRuntime(), { agent: openaiAgent(base, { model_provider: provider, model_name: model, llm_reasoning_effort: effort }) });
    expect(rec.outcome?.status).toBe('completed');
    return seen[0].generationConfig ?? {};
  };

  it.each(['gemini', 'google_ai_studio'])('%s: medium and null leave the thinking budget to Gemini; the others set it', async (p) => {
    expect((await configOf(p, 'gemini-2.5-flash', 'medium')).thinkingConfig).toBeUndefined();
    expect((await configOf(p, 'gemini-2.5-flash', null)).thinkingConfig).toBeUndefined();
    expect((await configOf(p, 'gemini-2.5-flash', 'low')).thinkingConfig).toEqual({ thinkingBudget: 1024 });
    expect((await configOf(p, 'gemini-2.5-flash', 'high')).thinkingConfig).toEqual({ thinkingBudget: 16384 });
    expect((await configOf(p, 'gemini-2.5-pro', 'xhigh')).thinkingConfig).toEqual({ thinkingBudget: 32768 });
    // Flash-Lite does not think by default: low keeps it off.
    expect((await configOf(p, 'gemini-2.5-flash-lite', 'low')).thinkingConfig).toEqual({ thinkingBudget: 0 });
    // Stored before the refusal: a model the catalog does not know runs without a budget.
    expect((await configOf(p, 'gemini-test', 'high')).thinkingConfig).toBeUndefined();
  });
});

describe("llm_reasoning_effort on OpenAI's own endpoint", () => {
  // Answers the Responses API with an error: only what reaches the endpoint is asserted here.
  const recorder = recordingServer((res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'recorded', type: 'invalid_request_error' } }));
  });
  const seen = recorder.seen;
  let origin: string;
  beforeAll(async () => {
    origin = await recorder.start();
  });
  afterAll(() => recorder.close());

  /** The official endpoint, reached through the runtime's public transport pointed at the local server. */
  const reasoningOf = async (model: string, effort: string | null) => {
    seen.length = 0;
    const publicFetch: typeof fetch = (input, init) => fetch(String(input instanceof Request ? input.url : input).replace('https://api.openai.com', origin), init);
    const rt = makeRuntime({ publicFetch });
    await runOnce(rt, { agent: openaiAgent('', { llm_api_base: null, model_name: model, llm_reasoning_effort: effort }) });
    expect(seen.length).toBeGreaterThan(0);
    return seen[0].reasoning;
  };

  it('sends the level the catalog lists, medium as before, and nothing the model cannot take', async () => {
    expect(await reasoningOf('gpt-5', 'high')).toEqual({ effort: 'high' });
    expect(await reasoningOf('o4-mini', 'low')).toEqual({ effort: 'low' });
    expect(await reasoningOf('gpt-5', 'medium')).toEqual({ effort: 'medium' });
    expect(await reasoningOf('gpt-5', null)).toBeUndefined();
    // Stored before the refusal: gpt-5 has no xhigh (OpenAI would answer 400), gpt-4.1 does not reason.
    expect(await reasoningOf('gpt-5', 'xhigh')).toBeUndefined();
    expect(await reasoningOf('gpt-4.1', 'high')).toBeUndefined();
  });
});

/** A local provider endpoint that records each request's JSON body and answers with `answer`. */
function recordingServer(answer: (res: ServerResponse) => void) {
  const seen: any[] = [];
  let server: Server | undefined;
  return {
    seen,
    async start(): Promise<string> {
      server = createServer(async (req, res) => {
        const parts: Buffer[] = [];
        for await (const c of req) parts.push(c as Buffer);
        seen.push(JSON.parse(Buffer.concat(parts).toString()));
        answer(res);
      });
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((r) => (server ? server.close(() => r()) : r())),
  };
}
