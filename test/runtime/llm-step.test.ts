import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText, type LanguageModel, type ModelMessage } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeLlmError } from '../../src/llm/llm-errors.js';
import { llmIoForTrace } from '../../src/observability/llm-io.js';
import { LlmCallError, runLlmStep, toAiTools, type LlmStepInput, type LlmStepResult, type LlmToolCall } from '../../src/runtime/llm-step.js';
import type { TaskTokens } from '../../src/tasks/task.types.js';
import type { RuntimeTool } from '../../src/tools/tool-kinds.js';
import { startAnthropicServer } from '../fakes/anthropic-server.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer, ScriptedReply } from '../fakes/scripted-llm.js';

/**
 * runLlmStep consumes the model's doStream directly; before, it went through streamText. These tests hold the two
 * side by side: the same call through both must give the same result (or error), the same emitted events and the
 * same request to the provider. The reference below is the former runLlmStep, unchanged.
 */

async function streamTextStep(input: LlmStepInput): Promise<LlmStepResult> {
  const { req, now } = input;
  const started = now();
  const hasTools = input.tools.length > 0;
  const result = streamText({
    model: input.model,
    system: input.system,
    messages: input.messages,
    tools: hasTools ? toAiTools(input.tools) : undefined,
    toolChoice: hasTools ? (input.allowTools ? 'auto' : 'none') : undefined,
    maxRetries: 0,
    abortSignal: req.signal,
    providerOptions: input.providerOptions,
    onError: () => undefined,
  });
  let text = '';
  let pending = '';
  let lastFlush = now();
  let emitFailure: unknown;
  const flush = async () => {
    if (!pending || emitFailure) return;
    const chunk = pending;
    pending = '';
    lastFlush = now();
    await req.emit('chunk', { text: chunk, iteration: input.iteration }).catch((e: unknown) => {
      emitFailure = e;
    });
  };
  const toolCalls: LlmToolCall[] = [];
  let tokens: TaskTokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let finishReason = 'unknown';
  let failure: unknown;
  try {
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') {
        text += part.text;
        pending += part.text;
        if (now() - lastFlush >= 50) await flush();
        if (emitFailure) break;
      } else if (part.type === 'tool-call') {
        const invalid = 'invalid' in part && part.invalid === true;
        toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input, invalid });
      } else if (part.type === 'finish-step') {
        const u = part.usage;
        const prompt = u.inputTokens ?? 0;
        const completion = u.outputTokens ?? 0;
        tokens = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: u.totalTokens ?? prompt + completion };
        finishReason = part.finishReason;
      } else if (part.type === 'error') {
        failure = part.error;
      }
    }
  } catch (e) {
    failure = e;
  }
  req.signal.throwIfAborted();
  await flush();
  if (emitFailure) throw emitFailure;
  await req.emit('llm_call', {
    provider: input.provider,
    model: input.modelName,
    iteration: input.iteration,
    latency_ms: now() - started,
    tokens,
    finish_reason: failure === undefined ? finishReason : 'error',
    tool_calls: toolCalls.map((c) => c.toolName),
    ...llmIoForTrace(input.system, input.messages, text, toolCalls),
    ...(failure === undefined ? {} : { error: describeLlmError(input.provider, input.modelName, failure) }),
  });
  if (failure !== undefined) throw new LlmCallError(describeLlmError(input.provider, input.modelName, failure), failure);
  const response = await result.response;
  return { text, toolCalls, tokens, finishReason, responseMessages: response.messages as ModelMessage[] };
}

const tool = (name: string, inputSchema: Record<string, unknown>): RuntimeTool => ({
  name,
  description: `The ${name} tool`,
  inputSchema,
  mutating: false,
  execute: async () => 'not run here',
});
const weather = tool('get_weather', { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
const search = tool('search', { type: 'object', properties: { q: { type: 'string' } } });

interface Case {
  model: LanguageModel;
  tools?: RuntimeTool[];
  allowTools?: boolean;
  messages?: ModelMessage[];
  providerOptions?: LlmStepInput['providerOptions'];
  emit?: (type: string) => Promise<void>;
  signal?: AbortSignal;
  /** Stops the call (a fresh AbortController per run) when the first chunk is emitted. */
  abortOnChunk?: boolean;
}

/** Provider warnings, as the SDK's global hook receives them (runtime.ts sends them to the log). */
let warnings: unknown[] = [];
beforeAll(() => {
  globalThis.AI_SDK_LOG_WARNINGS = (o) => void warnings.push(o);
});
afterAll(() => {
  globalThis.AI_SDK_LOG_WARNINGS = undefined;
});

/** Runs one implementation; what it returned or threw, what it emitted (deterministic clock) and warned. */
async function observe(impl: typeof runLlmStep, c: Case) {
  const events: [string, unknown][] = [];
  warnings = [];
  let t = 1000;
  const stop = new AbortController();
  const input: LlmStepInput = {
    model: c.model,
    provider: 'openai',
    modelName: 'gpt-test',
    providerOptions: c.providerOptions,
    system: 'You are terse.',
    messages: c.messages ?? [{ role: 'user', content: 'What is the weather in Paris?' }],
    tools: c.tools ?? [],
    allowTools: c.allowTools ?? true,
    iteration: 1,
    req: {
      emit: async (type: string, data: unknown) => {
        events.push([type, data]);
        if (c.abortOnChunk && type === 'chunk') stop.abort(new Error('stopped mid-answer'));
        await c.emit?.(type);
      },
      signal: c.signal ?? stop.signal,
    } as LlmStepInput['req'],
    // Each reading advances 20 ms: chunk batching (every 50 ms) is then the same for both.
    now: () => (t += 20),
  };
  try {
    return { result: await impl(input), events, warnings };
  } catch (e) {
    const err = e as Error & { cause?: unknown };
    const cause = err.cause as Error | undefined;
    return { error: { name: err.name, message: err.message, cause: cause?.constructor?.name, causeMessage: cause?.message }, events, warnings };
  }
}

/** Both implementations on the same case; the provider sees the same requests too. */
async function same(c: Case, server?: ScriptedLlmServer, replies: ScriptedReply[] = []) {
  server?.reply(...replies);
  const before = await observe(streamTextStep, c);
  const oldRequests = server?.requests.splice(0).map((r) => r.body);
  server?.reply(...replies);
  const after = await observe(runLlmStep, c);
  const newRequests = server?.requests.splice(0).map((r) => r.body);
  expect(after).toEqual(before);
  expect(newRequests).toEqual(oldRequests);
  return after;
}

describe('runLlmStep against streamText, over the scripted OpenAI-compatible server', () => {
  let llm: ScriptedLlmServer;
  let model: LanguageModel;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    model = createOpenAICompatible({ name: 'openai', baseURL: llm.baseUrl, apiKey: 'sk-test', includeUsage: true }).chatModel('gpt-test');
  });
  afterAll(async () => llm?.close());
  beforeEach(() => {
    llm.requests.length = 0;
    llm.handle(null);
  });

  it('a streamed answer: text, chunks, usage, finish reason, response message', async () => {
    const out = await same({ model }, llm, [{ text: 'It is sunny and 21 degrees in Paris today, with a light breeze.', usage: { prompt_tokens: 42, completion_tokens: 11 } }]);
    expect(out.result).toMatchObject({ text: 'It is sunny and 21 degrees in Paris today, with a light breeze.', finishReason: 'stop', tokens: { total_tokens: 53 } });
    expect(out.events.filter(([t]) => t === 'chunk').length).toBeGreaterThan(1);
  });

  it('a tool call after some text, then the conversation continued with its result', async () => {
    const first = await same({ model, tools: [weather, search] }, llm, [{ text: 'Let me check.', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] }]);
    expect(first.result).toMatchObject({ finishReason: 'tool-calls', toolCalls: [{ toolCallId: 'call_1', input: { city: 'Paris' }, invalid: false }] });
    const messages: ModelMessage[] = [
      { role: 'user', content: 'What is the weather in Paris?' },
      ...first.result!.responseMessages,
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'get_weather', output: { type: 'text', value: 'rain' } }] },
    ];
    await same({ model, tools: [weather, search], messages }, llm, [{ text: 'Rain.' }]);
  });

  it('arguments that are not JSON, an unknown tool, empty arguments', async () => {
    const out = await same({ model, tools: [weather] }, llm, [
      {
        toolCalls: [
          { id: 'call_a', name: 'get_weather', arguments: '{"city": "Par' },
          { id: 'call_b', name: 'no_such_tool', arguments: { x: 1 } },
          { id: 'call_c', name: 'get_weather', arguments: '' },
          { id: 'call_d', name: 'get_weather', arguments: '{"__proto__": {"x": 1}}' },
        ],
      },
    ]);
    expect(out.result!.toolCalls.map((c) => c.invalid)).toEqual([true, true, false, true]);
    expect(out.result!.responseMessages.map((m) => m.role)).toEqual(['assistant', 'tool']);
  });

  it('tool calls when tools are declared but not allowed, and when none are declared, fail the call', async () => {
    const calls = [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }];
    const refused = await same({ model, tools: [weather], allowTools: false }, llm, [{ text: 'Checking', toolCalls: calls }]);
    expect(refused.error).toMatchObject({ name: 'LlmCallError', cause: 'ToolChoiceViolationError' });
    const undeclared = await same({ model }, llm, [{ toolCalls: calls }]);
    expect(undeclared.result!.toolCalls).toMatchObject([{ invalid: true }]);
  });

  it('a length finish, provider options, and an empty answer', async () => {
    await same({ model, providerOptions: { openai: { user: 'u-1' } } }, llm, [{ text: 'Cut sho', finishReason: 'length' }]);
    await same({ model }, llm, [{ text: '' }]);
  });

  it('an HTTP error of the provider becomes the same LlmCallError and llm_call event', async () => {
    const out = await same({ model }, llm, [{ status: 400, error: 'bad request: context too long' }]);
    expect(out.error).toMatchObject({ name: 'LlmCallError', cause: 'APICallError' });
    expect(out.error!.message).toContain('HTTP 400: bad request: context too long');
  });

  it('an emit that fails is rethrown as it is; an aborted call throws the abort reason', async () => {
    const emitFails = await same({ model, emit: async (t) => (t === 'chunk' ? Promise.reject(new Error('lease lost')) : undefined) }, llm, [
      { text: 'A long answer that needs several chunks to arrive at the client.' },
    ]);
    expect(emitFails.error).toMatchObject({ name: 'Error', message: 'lease lost' });
    const ac = new AbortController();
    ac.abort(new Error('stopped by the user'));
    const aborted = await same({ model, signal: ac.signal });
    expect(aborted.error).toMatchObject({ message: 'stopped by the user' });
    const midway = await same({ model, abortOnChunk: true }, llm, [{ text: 'A long answer that needs several chunks to arrive at the client.' }]);
    expect(midway.error).toMatchObject({ message: 'stopped mid-answer' });
    expect(midway.events.map(([t]) => t)).toEqual(['chunk']);
  });
});

describe('runLlmStep against streamText, over the scripted Anthropic server', () => {
  let llm: ScriptedLlmServer;
  let model: LanguageModel;
  beforeAll(async () => {
    llm = await startAnthropicServer();
    model = createAnthropic({ apiKey: 'sk-ant', baseURL: llm.baseUrl })('claude-test');
  });
  afterAll(async () => llm?.close());

  it('text, a tool call, an overloaded error', async () => {
    await same({ model }, llm, [{ text: 'Hello there, this is a longer answer.', usage: { prompt_tokens: 7, completion_tokens: 9 } }]);
    await same({ model, tools: [weather] }, llm, [{ text: 'Checking.', toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Rome' } }] }]);
    const err = await same({ model }, llm, [{ status: 529, error: 'overloaded' }]);
    expect(err.error).toMatchObject({ name: 'LlmCallError', cause: 'APICallError' });
  });
});

/** A provider model whose stream is given part by part: for stream shapes the scripted servers do not produce. */
function partsModel(parts: unknown[], opts: { failAfter?: number } = {}): LanguageModel {
  return {
    specificationVersion: 'v3',
    provider: 'test.chat',
    modelId: 'test-model',
    supportedUrls: {},
    doGenerate: async () => {
      throw new Error('not used');
    },
    doStream: async () => ({
      stream: new ReadableStream({
        start(c) {
          parts.forEach((p, i) => {
            if (i === opts.failAfter) c.error(new Error('connection reset'));
            else if (opts.failAfter === undefined || i < opts.failAfter) c.enqueue(p);
          });
          if (opts.failAfter === undefined) c.close();
        },
      }),
    }),
  } as unknown as LanguageModel;
}

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const finish = (unified: string, u = usage(3, 4)) => ({ type: 'finish', finishReason: { unified, raw: unified }, usage: u });
const meta = (v: string) => ({ test: { signature: v } });

describe('runLlmStep against streamText, on stream shapes', () => {
  it('reasoning and text with provider metadata, a file, warnings', async () => {
    const parts = [
      { type: 'stream-start', warnings: [{ type: 'unsupported', feature: 'topK' }] },
      { type: 'reasoning-start', id: 'r1', providerMetadata: meta('a') },
      { type: 'reasoning-delta', id: 'r1', delta: 'thinking', providerMetadata: meta('b') },
      { type: 'reasoning-end', id: 'r1' },
      { type: 'reasoning-start', id: 'r2', providerMetadata: meta('redacted') },
      { type: 'reasoning-end', id: 'r2' },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'Hel' },
      { type: 'text-delta', id: 't1', delta: '' },
      { type: 'text-delta', id: 't1', delta: '', providerMetadata: meta('t') },
      { type: 'text-delta', id: 't1', delta: 'lo' },
      { type: 'text-end', id: 't1' },
      { type: 'text-start', id: 't2' },
      { type: 'text-end', id: 't2' },
      { type: 'file', mediaType: 'image/png', data: new Uint8Array([1, 2, 3]) },
      { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com' },
      { type: 'response-metadata', id: 'resp-1', modelId: 'test-model' },
      finish('stop'),
    ];
    const out = await same({ model: partsModel(parts) });
    expect(out.result!.responseMessages).toHaveLength(1);
    expect(out.warnings).toEqual([{ provider: 'test.chat', model: 'test-model', warnings: [{ type: 'unsupported', feature: 'topK' }] }]);
  });

  it('an error part in the stream, a stream that breaks, a stream with no finish, an empty stream', async () => {
    const text = [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'partial answer' }];
    const withError = await same({ model: partsModel([...text, { type: 'error', error: { message: 'overloaded' } }, finish('error', usage(5, 1))]) });
    expect(withError.events.find(([t]) => t === 'llm_call')![1]).toMatchObject({ tokens: { total_tokens: 6 }, finish_reason: 'error' });
    await same({ model: partsModel([...text, finish('stop')], { failAfter: 2 }) });
    const noFinish = await same({ model: partsModel([...text, { type: 'text-end', id: 't' }]) });
    expect(noFinish.result).toMatchObject({ finishReason: 'other', tokens: { total_tokens: 0 } });
    const empty = await same({ model: partsModel([{ type: 'response-metadata', id: 'x' }]) });
    expect(empty.error).toMatchObject({ cause: 'NoOutputGeneratedError' });
    await same({ model: partsModel([{ type: 'text-delta', id: 'nope', delta: 'orphan' }, finish('stop')]) });
  });

  it('provider-executed tool calls and results, streamed tool input, an approval for an unknown call', async () => {
    const parts = [
      { type: 'tool-input-start', id: 'c1', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"city":"Oslo"}' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: '{"city":"Oslo"}', providerMetadata: meta('sig') },
      { type: 'tool-call', toolCallId: 'p1', toolName: 'web_search', input: '{"q":"x"}', providerExecuted: true, dynamic: true },
      { type: 'tool-result', toolCallId: 'p1', toolName: 'web_search', result: { hits: 1 }, dynamic: true },
      { type: 'tool-call', toolCallId: 'p2', toolName: 'web_fetch', input: '', providerExecuted: true, dynamic: true },
      { type: 'tool-result', toolCallId: 'p2', toolName: 'web_fetch', result: 'denied', isError: true },
      finish('tool-calls'),
    ];
    await same({ model: partsModel(parts), tools: [weather] });
    await same({ model: partsModel(parts), tools: [weather], allowTools: false });
    await same({ model: partsModel([{ type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'zz' }, finish('stop')]), tools: [weather] });
  });
});
