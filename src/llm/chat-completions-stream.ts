import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { APICallError, EmptyResponseBodyError } from '@ai-sdk/provider';
import { VERSION } from '@ai-sdk/openai-compatible';
import { convertToOpenAICompatibleChatMessages, prepareTools } from '@ai-sdk/openai-compatible/internal';
import {
  createJsonErrorResponseHandler,
  extractResponseHeaders,
  isAbortError,
  postJsonToApi,
  withUserAgentSuffix,
  zodSchema,
} from '@ai-sdk/provider-utils';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import { ChunkTransform } from './chat-chunk-transform.js';

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
