import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3FinishReason, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { APICallError, EmptyResponseBodyError, InvalidResponseDataError, JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import { VERSION } from '@ai-sdk/openai-compatible';
import {
  convertOpenAICompatibleChatUsage,
  convertToOpenAICompatibleChatMessages,
  getResponseMetadata,
  mapOpenAICompatibleFinishReason,
  prepareTools,
} from '@ai-sdk/openai-compatible/internal';
import {
  createJsonErrorResponseHandler,
  extractResponseHeaders,
  generateId,
  isAbortError,
  postJsonToApi,
  secureJsonParse,
  StreamingToolCallTracker,
  withUserAgentSuffix,
  zodSchema,
  type StreamingToolCallDelta,
} from '@ai-sdk/provider-utils';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';

/**
 * The streamed call of the OpenAI Chat Completions protocol, read without the SDK's web-stream pipeline.
 *
 * `@ai-sdk/openai-compatible` parses every answer through five web streams (the body, TextDecoderStream, the SSE
 * parser, JSON, its own transform), each built per call (Node 20 makes every stream transferable, which is slow) and
 * each chunk validated by zod. Measured on this machine: ~750 us of client CPU per short streamed call, against
 * ~300 us for the same answer read here. That is a sixth of a synchronous webhook call's whole CPU
 * (docs/benchmarks.md).
 *
 * What is reused, so the parts stay the SDK's: its request building (messages, tools), its error handling for a
 * refused call (postJsonToApi, the JSON error handler), the SSE parser it uses (eventsource-parser, fed directly), its
 * streaming tool-call tracker, usage conversion and finish-reason mapping. What is ported is its chunk transform
 * (openai-compatible-chat-language-model.ts, doStream), part for part; test/llm/chat-completions-stream.test.ts feeds
 * the same bytes to both and requires the same parts, so an SDK upgrade that changes them fails there.
 *
 * Calls with options this path does not translate (sampling settings, response formats, provider options, extra
 * headers, raw chunks) and every `doGenerate` go to the SDK's own model: our runtime sends none of them today.
 */

type StreamPart = LanguageModelV3StreamPart;

export interface ChatStreamConfig {
  /** The SDK provider name (`createOpenAICompatible({ name })`): the key of the finish part's provider metadata. */
  providerName: string;
  /** The API base without a trailing slash; `/chat/completions` is appended. */
  baseURL: string;
  /** Authorization and the agent's extra headers, as given to `createOpenAICompatible`. */
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch;
}

/** The SDK model with `doStream` read here when the call allows it. */
export function withDirectChatStream(sdkModel: LanguageModelV3, config: ChatStreamConfig): LanguageModelV3 {
  const url = `${config.baseURL}/chat/completions`;
  // As createOpenAICompatible builds them, so a call sends the same headers on either path.
  const headers = withUserAgentSuffix(config.headers, `ai-sdk/openai-compatible/${VERSION}`);
  return {
    specificationVersion: 'v3',
    provider: sdkModel.provider,
    modelId: sdkModel.modelId,
    get supportedUrls() {
      return sdkModel.supportedUrls;
    },
    doGenerate: (options) => sdkModel.doGenerate(options),
    doStream: (options) => (isPlainCall(options) ? streamChat(sdkModel.modelId, url, headers, config, options) : sdkModel.doStream(options)),
  };
}

/** Only the prompt, tools and abort signal: the options whose translation this path shares with the SDK. */
function isPlainCall(o: LanguageModelV3CallOptions): boolean {
  return (
    o.maxOutputTokens === undefined &&
    o.temperature === undefined &&
    o.topP === undefined &&
    o.topK === undefined &&
    o.frequencyPenalty === undefined &&
    o.presencePenalty === undefined &&
    o.stopSequences === undefined &&
    o.responseFormat === undefined &&
    o.seed === undefined &&
    (o.providerOptions === undefined || Object.keys(o.providerOptions).length === 0) &&
    (o.headers === undefined || Object.keys(o.headers).length === 0) &&
    !o.includeRawChunks
  );
}

// The SDK's default error structure for OpenAI-compatible servers: `{ error: { message, type, param, code } }`.
const errorDataSchema = z.object({
  error: z.object({ message: z.string(), type: z.string().nullish(), param: z.any().nullish(), code: z.union([z.string(), z.number()]).nullish() }),
});
const failedResponseHandler = createJsonErrorResponseHandler({
  errorSchema: zodSchema(errorDataSchema),
  errorToMessage: (data: z.infer<typeof errorDataSchema>) => data.error.message,
});

async function streamChat(
  modelId: string,
  url: string,
  headers: Record<string, string | undefined>,
  config: ChatStreamConfig,
  options: LanguageModelV3CallOptions,
): Promise<Awaited<ReturnType<LanguageModelV3['doStream']>>> {
  const { tools, toolChoice, toolWarnings } = prepareTools({ tools: options.tools, toolChoice: options.toolChoice });
  const body = {
    model: modelId,
    messages: convertToOpenAICompatibleChatMessages(options.prompt),
    tools,
    tool_choice: toolChoice,
    stream: true,
    // Token usage in streamed answers is only sent when asked for.
    stream_options: { include_usage: true },
  };
  const { responseHeaders, value: response } = await postJsonToApi({
    url,
    headers,
    body,
    failedResponseHandler,
    successfulResponseHandler: async ({ response }) => {
      // As the SDK's event-stream handler does.
      if (response.body == null) throw new EmptyResponseBodyError({});
      return { value: { body: response.body, status: response.status }, responseHeaders: extractResponseHeaders(response) };
    },
    abortSignal: options.abortSignal,
    fetch: config.fetch,
  });

  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const chunks = new ChunkTransform(config.providerName);
  const parser = createParser({ onEvent: (event) => chunks.acceptData(event.data) });
  // The SDK's wrapResponseBodyStream: a body that fails mid-answer is an APICallError, retryable when the network
  // failed (an abort stays an abort).
  const bodyFailure = (cause: unknown) =>
    isAbortError(cause)
      ? cause
      : new APICallError({
          message: 'Failed to process successful response',
          cause,
          statusCode: response.status,
          url,
          responseHeaders,
          requestBodyValues: body,
          ...(isNetworkFailure(cause) && { isRetryable: true }),
        });

  const stream = new ReadableStream<StreamPart>({
    start(controller) {
      controller.enqueue({ type: 'stream-start', warnings: toolWarnings });
    },
    async pull(controller) {
      // Reads until a read yields parts or the body ends, so every pull delivers something.
      for (;;) {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (e) {
          controller.error(bodyFailure(e));
          return;
        }
        if (next.done) {
          // An event left without its blank line is dropped, as EventSourceParserStream does.
          parser.feed(decoder.decode());
          // finish() hands over every part not yet taken, its own last.
          for (const part of chunks.finish()) controller.enqueue(part);
          controller.close();
          return;
        }
        parser.feed(decoder.decode(next.value, { stream: true }));
        const parts = chunks.take();
        if (parts.length === 0) continue;
        for (const part of parts) controller.enqueue(part);
        return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { stream, request: { body }, response: { headers: responseHeaders } };
}

/** The error codes provider-utils' handleFetchError counts as a network failure. */
const NETWORK_ERROR_CODES = new Set([
  'ConnectionRefused',
  'ConnectionClosed',
  'FailedToOpenSocket',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function isNetworkFailure(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
  }
  return false;
}

/** A tool-call delta as the chunk carries it (validated by isChunk). */
type ToolCallDelta = StreamingToolCallDelta & { index?: number | null; extra_content?: { google?: { thought_signature?: string | null } | null } | null };

/**
 * The SDK's per-chunk transform of openai-compatible@2 (doStream), over parsed chunks. Parts are collected and taken
 * by the reader; `finish` is the SDK's flush.
 */
class ChunkTransform {
  private parts: StreamPart[] = [];
  private readonly tracker: StreamingToolCallTracker;
  /** Tool calls whose name has not arrived yet (some servers send arguments first), by index. */
  private readonly pendingToolCalls = new Map<number, { id: string | null; bufferedArguments: string; extraContent: ToolCallDelta['extra_content'] | null }>();
  private readonly forwardedToolCallIndices = new Set<number>();
  private finishReason: LanguageModelV3FinishReason | undefined;
  private rawFinishReason: string | undefined;
  private usage: any;
  private isFirstChunk = true;
  private isActiveReasoning = false;
  private isActiveText = false;
  private hasRefusal = false;

  constructor(private readonly providerName: string) {
    // The tracker only calls enqueue on its controller.
    const controller = { enqueue: (part: StreamPart) => this.parts.push(part) } as unknown as TransformStreamDefaultController<StreamPart>;
    this.tracker = new StreamingToolCallTracker(controller, {
      generateId,
      extractMetadata: (delta: ToolCallDelta) => {
        const thoughtSignature = delta.extra_content?.google?.thought_signature;
        return thoughtSignature ? { [providerName]: { thoughtSignature } } : undefined;
      },
      buildToolCallProviderMetadata: (metadata: any) => metadata,
    } as ConstructorParameters<typeof StreamingToolCallTracker>[1]);
  }

  take(): StreamPart[] {
    const parts = this.parts;
    this.parts = [];
    return parts;
  }

  /** One SSE event's data: `[DONE]` ends nothing by itself (the body's end does), as in the SDK. */
  acceptData(data: string): void {
    if (data === '[DONE]') return;
    let value: unknown;
    try {
      value = secureJsonParse(data);
    } catch (cause) {
      this.fail(new JSONParseError({ text: data, cause }));
      return;
    }
    if (isChunk(value)) {
      if ('error' in value) return this.fail((value as { error: unknown }).error);
      this.accept(value);
    } else if (isErrorChunk(value)) {
      // zod's object keeps the schema's keys only.
      const { message, type, param, code } = value.error;
      this.fail({ message, ...(type !== undefined && { type }), ...(param !== undefined && { param }), ...(code !== undefined && { code }) });
    } else {
      // zod's message would list the failing paths; this says what was expected.
      this.fail(new TypeValidationError({ value, cause: new Error('not a chat completion chunk (an object with a choices array) nor an error ({ error: { message } })') }));
    }
  }

  private fail(error: unknown): void {
    this.finishReason = { unified: 'error', raw: undefined };
    this.parts.push({ type: 'error', error });
  }

  private accept(value: Chunk): void {
    if (this.isFirstChunk) {
      this.isFirstChunk = false;
      this.parts.push({ type: 'response-metadata', ...getResponseMetadata(value) });
    }
    if (value.usage != null) this.usage = value.usage;
    const choice = value.choices[0];
    if (choice?.finish_reason != null) this.rawFinishReason = choice.finish_reason;
    const delta = choice?.delta;
    if (delta == null) return;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (reasoning) this.reasoningDelta(reasoning);
    for (const part of contentParts(delta.content)) {
      if (part.type === 'reasoning') this.reasoningDelta(part.text);
      else this.textDelta(part.text);
    }
    // Some servers send a non-string refusal (e.g. false): ignored, as the SDK's schema does.
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) {
      this.hasRefusal = true;
      this.textDelta(delta.refusal);
    }
    if (delta.tool_calls != null && delta.tool_calls.length > 0) {
      this.endReasoning();
      for (const toolCallDelta of delta.tool_calls) this.toolCallDelta(toolCallDelta);
    }
  }

  private endReasoning(): void {
    if (!this.isActiveReasoning) return;
    this.parts.push({ type: 'reasoning-end', id: 'reasoning-0' });
    this.isActiveReasoning = false;
  }

  private reasoningDelta(delta: string): void {
    if (this.isActiveText) {
      this.parts.push({ type: 'text-end', id: 'txt-0' });
      this.isActiveText = false;
    }
    if (!this.isActiveReasoning) {
      this.parts.push({ type: 'reasoning-start', id: 'reasoning-0' });
      this.isActiveReasoning = true;
    }
    this.parts.push({ type: 'reasoning-delta', id: 'reasoning-0', delta });
  }

  private textDelta(delta: string): void {
    this.endReasoning();
    if (!this.isActiveText) {
      this.parts.push({ type: 'text-start', id: 'txt-0' });
      this.isActiveText = true;
    }
    this.parts.push({ type: 'text-delta', id: 'txt-0', delta });
  }

  /** A tool call is forwarded to the tracker once its name is known; arguments sent before it are buffered. */
  private toolCallDelta(delta: ToolCallDelta): void {
    const index = delta.index;
    if (index == null || this.forwardedToolCallIndices.has(index)) {
      this.tracker.processDelta(delta);
      return;
    }
    let pending = this.pendingToolCalls.get(index);
    if (pending == null) {
      pending = { id: delta.id ?? null, bufferedArguments: '', extraContent: delta.extra_content ?? null };
      this.pendingToolCalls.set(index, pending);
    } else {
      if (pending.id == null && delta.id != null) pending.id = delta.id;
      if (pending.extraContent == null && delta.extra_content != null) pending.extraContent = delta.extra_content;
    }
    if (delta.function?.arguments != null) pending.bufferedArguments += delta.function.arguments;
    const name = delta.function?.name;
    if (name != null) {
      this.tracker.processDelta({
        index,
        id: pending.id,
        function: { name, arguments: pending.bufferedArguments },
        extra_content: pending.extraContent ?? undefined,
      } as ToolCallDelta);
      this.pendingToolCalls.delete(index);
      this.forwardedToolCallIndices.add(index);
    }
  }

  /** The SDK's flush: open blocks closed, tool calls finished, then the finish part (or an error without one). */
  finish(): StreamPart[] {
    if (this.isActiveReasoning) this.parts.push({ type: 'reasoning-end', id: 'reasoning-0' });
    if (this.isActiveText) this.parts.push({ type: 'text-end', id: 'txt-0' });
    for (const [index, pending] of this.pendingToolCalls) {
      this.tracker.processDelta({ index, id: pending.id, function: { arguments: pending.bufferedArguments } } as ToolCallDelta);
    }
    this.pendingToolCalls.clear();
    this.tracker.flush();
    if (this.rawFinishReason != null) {
      this.finishReason = { unified: mapOpenAICompatibleFinishReason(this.rawFinishReason, { hasRefusal: this.hasRefusal }), raw: this.rawFinishReason };
    }
    if (this.finishReason == null) {
      this.finishReason = { unified: 'error', raw: undefined };
      this.parts.push({ type: 'error', error: new InvalidResponseDataError({ data: undefined, message: 'Response stream ended without a finish reason.' }) });
    }
    const metadata: Record<string, number> = {};
    const details = this.usage?.completion_tokens_details;
    if (details?.accepted_prediction_tokens != null) metadata.acceptedPredictionTokens = details.accepted_prediction_tokens;
    if (details?.rejected_prediction_tokens != null) metadata.rejectedPredictionTokens = details.rejected_prediction_tokens;
    this.parts.push({ type: 'finish', finishReason: this.finishReason, usage: convertOpenAICompatibleChatUsage(this.usage), providerMetadata: { [this.providerName]: metadata } });
    return this.take();
  }
}

/** The SDK's convertOpenAICompatibleContent: a string, or parts of which text and `thinking` count. */
function contentParts(content: unknown): { type: 'text' | 'reasoning'; text: string }[] {
  if (content == null) return [];
  if (typeof content === 'string') return content.length > 0 ? [{ type: 'text', text: content }] : [];
  const result: { type: 'text' | 'reasoning'; text: string }[] = [];
  for (const part of content as any[]) {
    if (part.type === 'text' && typeof part.text === 'string') {
      if (part.text.length > 0) result.push({ type: 'text', text: part.text });
    } else if (part.type === 'thinking' && Array.isArray(part.thinking)) {
      const text = part.thinking
        .filter((c: any) => c != null && typeof c === 'object' && c.type === 'text' && typeof c.text === 'string')
        .map((c: any) => c.text)
        .join('');
      if (text.length > 0) result.push({ type: 'reasoning', text });
    }
  }
  return result;
}

// ---- The SDK's chunk schema (chunkBaseSchema, the error schema), as plain checks: zod per chunk was a large
// share of the pipeline's cost. A chunk that fails them is an error part, as a failed zod parse is.

interface Chunk {
  id?: string | null;
  created?: number | null;
  model?: string | null;
  choices: { delta?: Delta | null; finish_reason?: string | null }[];
  usage?: Record<string, unknown> | null;
}
interface Delta {
  content?: unknown;
  refusal?: unknown;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: ToolCallDelta[] | null;
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nullishOr = (v: unknown, t: 'string' | 'number'): boolean => v == null || typeof v === t;
const nullishObject = (v: unknown): boolean => v == null || isObject(v);

function isChunk(v: unknown): v is Chunk {
  if (!isObject(v)) return false;
  if (!nullishOr(v.id, 'string') || !nullishOr(v.created, 'number') || !nullishOr(v.model, 'string')) return false;
  if (!Array.isArray(v.choices) || !v.choices.every(isChoice)) return false;
  return isUsage(v.usage);
}

function isChoice(c: unknown): boolean {
  return isObject(c) && nullishOr(c.finish_reason, 'string') && (c.delta == null || isDelta(c.delta));
}

function isDelta(d: unknown): boolean {
  if (!isObject(d)) return false;
  if (d.role != null && d.role !== 'assistant' && d.role !== '') return false;
  if (!nullishOr(d.reasoning_content, 'string') || !nullishOr(d.reasoning, 'string')) return false;
  const c = d.content;
  if (c != null && typeof c !== 'string' && !(Array.isArray(c) && c.every((p) => isObject(p) && typeof p.type === 'string'))) return false;
  return d.tool_calls == null || (Array.isArray(d.tool_calls) && d.tool_calls.every(isToolCallDelta));
}

function isToolCallDelta(t: unknown): boolean {
  if (!isObject(t) || !nullishOr(t.index, 'number') || !nullishOr(t.id, 'string')) return false;
  if (!isObject(t.function) || !nullishOr(t.function.name, 'string') || !nullishOr(t.function.arguments, 'string')) return false;
  const extra = t.extra_content;
  return extra == null || (isObject(extra) && (extra.google == null || (isObject(extra.google) && nullishOr(extra.google.thought_signature, 'string'))));
}

function isUsage(u: unknown): boolean {
  if (u == null) return true;
  if (!isObject(u)) return false;
  if (!nullishOr(u.prompt_tokens, 'number') || !nullishOr(u.completion_tokens, 'number') || !nullishOr(u.total_tokens, 'number')) return false;
  const p = u.prompt_tokens_details;
  const c = u.completion_tokens_details;
  if (!nullishObject(p) || (p && !nullishOr(p.cached_tokens, 'number'))) return false;
  if (!nullishObject(c)) return false;
  return !c || (nullishOr(c.reasoning_tokens, 'number') && nullishOr(c.accepted_prediction_tokens, 'number') && nullishOr(c.rejected_prediction_tokens, 'number'));
}

function isErrorChunk(v: unknown): v is { error: { message: string; type?: unknown; param?: unknown; code?: unknown } } {
  if (!isObject(v) || !isObject(v.error)) return false;
  const e = v.error;
  return typeof e.message === 'string' && nullishOr(e.type, 'string') && (e.code == null || typeof e.code === 'string' || typeof e.code === 'number');
}
