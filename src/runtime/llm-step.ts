import type { ProviderOptions } from '../llm/llm-providers.js';
import { jsonSchema, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';
import type { TaskTokens } from '../tasks/task.types.js';
import type { RuntimeTool } from '../tools/tool-kinds.js';
import { describeLlmError } from '../llm/llm-errors.js';
import { llmIoForTrace } from '../observability/llm-io.js';
import { openModelStream, type ModelStep } from './model-stream.js';
import type { RunRequest } from './task-runner.js';
import type { ForcedChoice } from './tool-gates.js';

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
  /** The message(s) to append to the conversation, as streamText's response.messages (keeps provider metadata). */
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
  /** With allowTools: a call the model must make (the graph's next step, a mandatory plan); absent: 'auto'. */
  toolChoice?: ForcedChoice;
  iteration: number;
  req: Pick<RunRequest, 'emit' | 'signal'>;
  now: () => number;
  /** Turns the model's deltas into what the `chunk` events carry (PII placeholders restored); null: as they are. */
  restorer?: { push(delta: string): string; end(): string } | null;
  /** Added to the call's `llm_call` event (what was trimmed to fit the context window: context-trim.ts). */
  traceNote?: Record<string, unknown>;
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

  // The model's doStream consumed directly (model-stream.ts): streamText's pipeline cost ~2 ms of CPU per call.
  let step: ModelStep | undefined;
  let failure: unknown;
  try {
    step = await openModelStream({
      model: input.model,
      system: input.system,
      messages: input.messages,
      tools: hasTools ? toAiTools(input.tools) : undefined,
      toolChoice: hasTools ? (input.allowTools ? (input.toolChoice ?? 'auto') : 'none') : undefined,
      providerOptions: input.providerOptions,
      abortSignal: req.signal,
    });
    for await (const delta of step.textDeltas()) {
      text += delta;
      pending += input.restorer ? input.restorer.push(delta) : delta;
      if (now() - lastFlush >= CHUNK_FLUSH_MS) await flush();
      if (emitFailure) break;
    }
    failure = step.failure;
  } catch (e) {
    // Thrown by doStream (e.g. APICallError after the transport's retries) or by the stream itself.
    failure = e;
  }
  req.signal.throwIfAborted();
  if (input.restorer) pending += input.restorer.end();
  await flush();
  if (emitFailure) throw emitFailure;

  const toolCalls: LlmToolCall[] = step ? step.toolCalls : [];
  let tokens: TaskTokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let finishReason = 'unknown';
  // Usage counts only when the stream closed normally (streamText's finish-step), even if it carried an error.
  const finished = step?.finished;
  if (finished) {
    const u = finished.usage;
    const prompt = u.inputTokens ?? 0;
    const completion = u.outputTokens ?? 0;
    tokens = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: u.totalTokens ?? prompt + completion };
    finishReason = finished.finishReason;
  }

  // A failed call is an LLM call too: the trace shows it with its error.
  await req.emit('llm_call', {
    provider: input.provider,
    model: input.modelName,
    iteration: input.iteration,
    latency_ms: now() - started,
    tokens,
    finish_reason: failure === undefined ? finishReason : 'error',
    tool_calls: toolCalls.map((c) => c.toolName),
    // A forced choice shows in the trace: why the model called that tool (docs/planning-and-chaining.md).
    ...(hasTools && input.allowTools && input.toolChoice ? { tool_choice: input.toolChoice } : {}),
    // What the provider was sent and answered, bounded (observability/llm-io.ts).
    ...llmIoForTrace(input.system, input.messages, text, toolCalls),
    ...(failure === undefined ? {} : { error: describeLlmError(input.provider, input.modelName, failure) }),
    ...input.traceNote,
  });
  if (failure !== undefined) throw new LlmCallError(describeLlmError(input.provider, input.modelName, failure), failure);
  return { text, toolCalls, tokens, finishReason, responseMessages: step!.responseMessages() };
}
