import type { ProviderOptions } from '../llm/llm-providers.js';
import { jsonSchema, streamText, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';
import type { TaskTokens } from '../tasks/task.types.js';
import type { RuntimeTool } from '../tools/tool-kinds.js';
import { describeLlmError } from '../llm/llm-errors.js';
import type { RunRequest } from './task-runner.js';

/** A provider call that failed after the transport's retries; the message is fit for the task result. */
export class LlmCallError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'LlmCallError';
  }
}

/**
 * One LLM call of a run, streamed: text deltas become `chunk` events as they arrive, and the call ends with one
 * `llm_call` event (provider, model, latency, tokens). Retries of 429/5xx happen below, in the transport.
 */

export interface LlmToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** The model produced arguments that are not JSON, or named no known tool. */
  invalid: boolean;
}

export interface LlmStepResult {
  text: string;
  toolCalls: LlmToolCall[];
  tokens: TaskTokens;
  finishReason: string;
  /** The assistant message(s) to append to the conversation, as the SDK built them (keeps provider metadata). */
  responseMessages: ModelMessage[];
}

export interface LlmStepInput {
  model: LanguageModel;
  provider: string;
  modelName: string;
  providerOptions?: ProviderOptions;
  system: string;
  messages: ModelMessage[];
  tools: RuntimeTool[];
  /** False: tools stay declared (providers refuse tool history without them) but the model may not call them. */
  allowTools: boolean;
  iteration: number;
  req: Pick<RunRequest, 'emit' | 'signal'>;
  now: () => number;
}

/** Chunks are coalesced so a long answer is tens of events, not thousands. */
const CHUNK_FLUSH_MS = 50;

export function toAiTools(tools: RuntimeTool[]): ToolSet {
  const set: ToolSet = {};
  for (const t of tools) set[t.name] = { description: t.description, inputSchema: jsonSchema(t.inputSchema as Parameters<typeof jsonSchema>[0]) };
  return set;
}

export async function runLlmStep(input: LlmStepInput): Promise<LlmStepResult> {
  const { req, now } = input;
  const started = now();
  const hasTools = input.tools.length > 0;
  const result = streamText({
    model: input.model,
    system: input.system,
    messages: input.messages,
    tools: hasTools ? toAiTools(input.tools) : undefined,
    toolChoice: hasTools ? (input.allowTools ? 'auto' : 'none') : undefined,
    // Retries are the transport's (createRetryingFetch): one bounded policy for every provider.
    maxRetries: 0,
    abortSignal: req.signal,
    providerOptions: input.providerOptions,
    // Errors arrive as `error` parts below and end the run with a clear result; the SDK's default console print
    // would only duplicate them outside the structured log.
    onError: () => undefined,
  });

  let text = '';
  let pending = '';
  let lastFlush = now();
  // A failing emit (e.g. the worker lost its lease) is not a provider failure: kept apart and rethrown as it is.
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
        if (now() - lastFlush >= CHUNK_FLUSH_MS) await flush();
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

  // A failed call is an LLM call too: the trace shows it with its error.
  await req.emit('llm_call', {
    provider: input.provider,
    model: input.modelName,
    iteration: input.iteration,
    latency_ms: now() - started,
    tokens,
    finish_reason: failure === undefined ? finishReason : 'error',
    tool_calls: toolCalls.map((c) => c.toolName),
    ...(failure === undefined ? {} : { error: describeLlmError(input.provider, input.modelName, failure) }),
  });
  if (failure !== undefined) throw new LlmCallError(describeLlmError(input.provider, input.modelName, failure), failure);
  const response = await result.response;
  return { text, toolCalls, tokens, finishReason, responseMessages: response.messages as ModelMessage[] };
}
