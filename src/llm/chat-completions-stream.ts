import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart, SharedV3Warning } from '@ai-sdk/provider';
import { APICallError, EmptyResponseBodyError } from '@ai-sdk/provider';
import { VERSION } from '@ai-sdk/openai-compatible';
import { convertToOpenAICompatibleChatMessages, prepareTools } from '@ai-sdk/openai-compatible/internal';
import {
  createJsonErrorResponseHandler,
  extractResponseHeaders,
  getRuntimeEnvironmentUserAgent,
  isAbortError,
  postJsonToApi,
  VERSION as PROVIDER_UTILS_VERSION,
  withUserAgentSuffix,
  zodSchema,
} from '@ai-sdk/provider-utils';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { Readable } from 'node:stream';
import { NODE_BODY, nodeBodyOf } from '../net/safe-fetch.js';
import { AnswerTooLarge } from '../net/bounded-response.js';
import { MAX_LLM_MESSAGE_BYTES } from './llm-limits.js';
import { z } from 'zod';
import { ChunkTransform } from './chat-chunk-transform.js';
import { wrapModel } from './wrap-model.js';

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
 * No web stream is built on the way either: the transport hands the body over as its Node stream when it can
 * (safe-fetch's NODE_BODY, for an agent's llm_api_base), and the runtime takes the parts with `partReaderOf`, so the
 * result's `stream` is only built for a caller that asks for it. Both were a further ~5% of a short run's CPU.
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
  // And as postJsonToApi completes them on every call (undici Headers built and read back, ~1.5% of a short run's
  // CPU): once per model here, for the calls sent without it (postChat).
  const sent = withUserAgentSuffix({ 'Content-Type': 'application/json', ...headers }, `ai-sdk/provider-utils/${PROVIDER_UTILS_VERSION}`, getRuntimeEnvironmentUserAgent());
  return wrapModel(sdkModel, {
    doStream: (options) => (isPlainCall(options) ? streamChat(sdkModel.modelId, url, { headers, sent }, config, options) : sdkModel.doStream(options)),
  });
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

/** A call's headers: as given to postJsonToApi, and as it sends them (computed once per model). */
interface CallHeaders {
  headers: Record<string, string | undefined>;
  sent: Record<string, string>;
}

async function streamChat(
  modelId: string,
  url: string,
  callHeaders: CallHeaders,
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
  const { responseHeaders, value: response } = await postChat(url, callHeaders, body, config, options.abortSignal);
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
  const parts = new ChatPartReader(bytesOf(response.source), new ChunkTransform(config.providerName), toolWarnings, bodyFailure);
  return new DirectStreamResult({ body }, { headers: responseHeaders }, parts);
}

type StreamResult = Awaited<ReturnType<LanguageModelV3['doStream']>>;

/** The reading side of a stream of parts, as a ReadableStream's default reader offers it. */
export interface PartReader {
  read(): Promise<ReadableStreamReadResult<StreamPart>>;
  /**
   * The next part when one is already waiting (the rest of a network read), else undefined: then `read()` says
   * what comes (more bytes, the end, a failure). Saves a promise per part; a web stream's reader has no such method.
   */
  readNow?(): StreamPart | undefined;
  cancel(reason?: unknown): Promise<void>;
}

/**
 * The parts of a `doStream` result. For a call read here, the parts come straight from the body without the
 * ReadableStream the result's `stream` would build (Node 20 makes every web stream transferable on construction,
 * which is slow); any other model's stream is read as usual. Either way the result's parts can be read once.
 */
export function partReaderOf(result: StreamResult): PartReader {
  // A result that reads its own parts: this file's DirectStreamResult, or a call bounded by llm-call-limits.ts.
  const own = result as StreamResult & { partReader?: () => PartReader };
  return typeof own.partReader === 'function' ? own.partReader() : result.stream.getReader();
}

/**
 * What `doStream` returns here: the SDK's result, with `stream` built only when asked for, and the direct reader
 * beside it (partReaderOf). Whichever is taken first owns the parts. A class, so the getter costs no per-call
 * object reshaping; nothing copies a result (a spread would drop `stream`).
 */
class DirectStreamResult implements StreamResult {
  private taken = false;
  private built: ReadableStream<StreamPart> | undefined;

  constructor(
    readonly request: StreamResult['request'],
    readonly response: StreamResult['response'],
    private readonly parts: ChatPartReader,
  ) {}

  get stream(): ReadableStream<StreamPart> {
    return (this.built ??= readableOfParts(this.take()));
  }

  partReader(): PartReader {
    return this.take();
  }

  private take(): ChatPartReader {
    if (this.taken) throw new TypeError('The stream of this model call has already been read');
    this.taken = true;
    return this.parts;
  }
}

/** The parts as a web stream, for a caller that asks a result for its `stream`. */
export function readableOfParts(parts: PartReader): ReadableStream<StreamPart> {
  return new ReadableStream<StreamPart>({
    async pull(controller) {
      try {
        const next = await parts.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (e) {
        controller.error(e);
      }
    },
    cancel: (reason) => parts.cancel(reason),
  });
}

/** The body's bytes, one read at a time, from a Node stream or a web stream. */
interface ByteSource {
  next(): Promise<{ done?: boolean; value?: Uint8Array }>;
  cancel(reason: unknown): Promise<void>;
}

function bytesOf(source: Readable | ReadableStream<Uint8Array>): ByteSource {
  if (source instanceof ReadableStream) {
    const reader = source.getReader();
    return { next: () => reader.read(), cancel: (reason) => reader.cancel(reason) };
  }
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return {
    next: () => chunks.next(),
    cancel: async () => {
      source.destroy();
    },
  };
}

/**
 * The SSE body turned into stream parts, pulled by the reader: each read takes the next part, reading the body only
 * when none is waiting. The first part is stream-start; an event left without its blank line at the end is dropped,
 * as EventSourceParserStream does; finish() hands over every part not yet taken, its own last. A failed body read
 * rejects this read and every later one with the same error, as an errored web stream does.
 */
class ChatPartReader implements PartReader {
  private waiting: StreamPart[];
  private at = 0;
  private ended = false;
  private failure: unknown = undefined;
  /** Set when one event passed MAX_LLM_MESSAGE_BYTES: the parser stops, and so does the body. */
  private oversize: AnswerTooLarge | undefined = undefined;
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;

  constructor(
    private readonly bytes: ByteSource,
    private readonly chunks: ChunkTransform,
    warnings: SharedV3Warning[],
    private readonly bodyFailure: (cause: unknown) => unknown,
  ) {
    this.waiting = [{ type: 'stream-start', warnings }];
    this.parser = createParser({
      onEvent: (event) => chunks.acceptData(event.data),
      // The parser buffers an event until its blank line; the endpoint is the tenant's (llm_api_base).
      maxBufferSize: MAX_LLM_MESSAGE_BYTES,
      onError: (e) => {
        if (e.type === 'max-buffer-size-exceeded') this.oversize ??= new AnswerTooLarge(MAX_LLM_MESSAGE_BYTES);
      },
    });
  }

  readNow(): StreamPart | undefined {
    return this.at < this.waiting.length ? this.waiting[this.at++] : undefined;
  }

  async read(): Promise<ReadableStreamReadResult<StreamPart>> {
    for (;;) {
      if (this.at < this.waiting.length) return { done: false, value: this.waiting[this.at++]! };
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return { done: true, value: undefined };
      let next: { done?: boolean; value?: Uint8Array };
      try {
        next = await this.bytes.next();
      } catch (e) {
        this.failure = this.bodyFailure(e);
        throw this.failure;
      }
      if (next.done) {
        this.parser.feed(this.decoder.decode());
        this.ended = true;
        this.refill(this.chunks.finish());
      } else {
        this.parser.feed(this.decoder.decode(next.value, { stream: true }));
        this.refill(this.chunks.take());
      }
      if (this.oversize) {
        this.failure = this.bodyFailure(this.oversize);
        this.ended = true;
        await this.bytes.cancel(this.oversize).catch(() => {});
      }
    }
  }

  cancel(reason?: unknown): Promise<void> {
    this.ended = true;
    this.refill([]);
    return this.bytes.cancel(reason);
  }

  private refill(parts: StreamPart[]): void {
    this.waiting = parts;
    this.at = 0;
  }
}

type ChatResponse = { value: { source: Readable | ReadableStream<Uint8Array>; status: number }; responseHeaders?: Record<string, string> };

/**
 * The POST of a streamed call, as postJsonToApi makes it. A successful answer with a body is taken here; anything else
 * (a failed connection, an error status, an answer without a body) is replayed through postJsonToApi itself, with a
 * fetch that gives back what this one got, so errors keep exactly the SDK's shapes and retry flags.
 */
async function postChat(url: string, h: CallHeaders, body: object, config: ChatStreamConfig, signal: AbortSignal | undefined): Promise<ChatResponse> {
  let response: Response | undefined;
  let failure: unknown;
  try {
    // Asks the transport for the body as the Node stream it arrives on (safe-fetch.ts NODE_BODY); another fetch
    // ignores the option and answers with a web stream.
    response = await config.fetch(url, { method: 'POST', headers: h.sent, body: JSON.stringify(body), signal, [NODE_BODY]: true } as RequestInit);
  } catch (e) {
    failure = e;
  }
  const source = response?.ok ? (nodeBodyOf(response) ?? response.body) : null;
  if (source != null) return { value: { source, status: response!.status }, responseHeaders: extractResponseHeaders(response!) };
  return postJsonToApi({
    url,
    headers: h.headers,
    body,
    failedResponseHandler,
    successfulResponseHandler: async ({ response: r }) => {
      const replayed = nodeBodyOf(r) ?? r.body;
      // As the SDK's event-stream handler does.
      if (replayed == null) throw new EmptyResponseBodyError({});
      return { value: { source: replayed, status: r.status }, responseHeaders: extractResponseHeaders(r) };
    },
    abortSignal: signal,
    fetch: async () => {
      if (response === undefined) throw failure;
      return response;
    },
  });
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
