import {
  InvalidToolInputError,
  JSONParseError,
  NoOutputGeneratedError,
  NoSuchToolError,
  parsePartialJson,
  ToolCallNotFoundForApprovalError,
  ToolChoiceViolationError,
  UnsupportedModelVersionError,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
  type ToolSet,
} from 'ai';
import { asLanguageModelUsage, prepareCallSettings, prepareToolsAndToolChoice } from 'ai/internal';
import { partReaderOf, type PartReader } from '../llm/chat-completions-stream.js';
import { isPromise, type Awaitable } from '../lib/awaitable.js';
import { sdkPrompt, standardPrompt, textOnlyPrompt } from './model-prompt.js';
import type { ProviderOptions } from '../llm/llm-providers.js';

/**
 * One model call consumed straight from `doStream`: what `streamText` did for our single-step calls, without its
 * web-stream pipeline and per-part bookkeeping (~2 ms of CPU per call, measured). The SDK's own helpers build the
 * prompt and the tools; the rest mirrors streamText@6 part by part (tool-call parsing, `tool_choice: none`
 * enforcement, the response messages, the NoOutputGeneratedError of an empty stream), so results stay the same.
 */

type ModelV3 = Extract<LanguageModel, { specificationVersion: 'v3' }>;
type StreamPart = Awaited<ReturnType<ModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;
type PartOf<T extends StreamPart['type']> = Extract<StreamPart, { type: T }>;
type Metadata = PartOf<'text-start'>['providerMetadata'];
type Warnings = PartOf<'stream-start'>['warnings'];

export interface StepToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  invalid: boolean;
}

/** What the step recorded, in stream order; turned into the response messages at the end. */
type Content =
  | { type: 'text'; text: string; providerMetadata: Metadata }
  | { type: 'reasoning'; text: string; providerMetadata: Metadata }
  | { type: 'file'; data: string; mediaType: string; providerMetadata: Metadata }
  | { type: 'tool-call'; call: StepToolCall; providerExecuted?: boolean; providerMetadata: Metadata; error?: unknown }
  | { type: 'tool-result'; toolCallId: string; toolName: string; output: unknown; isError: boolean; providerMetadata: Metadata }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string };

export interface ModelStepRequest {
  model: LanguageModel;
  system: string;
  messages: ModelMessage[];
  tools: ToolSet | undefined;
  toolChoice: 'auto' | 'none' | 'required' | { type: 'tool'; toolName: string } | undefined;
  providerOptions?: ProviderOptions;
  abortSignal: AbortSignal;
}

/** streamText resolves string ids through a global provider; ours are always provider objects (llm-providers.ts). */
function asModelV3(model: LanguageModel): ModelV3 {
  if (typeof model === 'string') throw new Error(`model "${model}" is an id, not a provider model`);
  if (model.specificationVersion !== 'v3') {
    throw new UnsupportedModelVersionError({ version: model.specificationVersion, provider: model.provider, modelId: model.modelId });
  }
  return model;
}

/** Starts the call. Throws what doStream throws (e.g. APICallError): the error streamText passed on as an error part. */
export async function openModelStream(r: ModelStepRequest): Promise<ModelStep> {
  const model = asModelV3(r.model);
  const prompt = standardPrompt(r.system, r.messages);
  const promptMessages = textOnlyPrompt(prompt.system, prompt.messages) ?? (await sdkPrompt(prompt, () => model.supportedUrls, r.abortSignal));
  const { tools, toolChoice } = await prepareToolsAndToolChoice({ tools: r.tools, toolChoice: r.toolChoice, activeTools: undefined });
  // No extra headers and no SDK retries: the transport (createRetryingFetch) retries.
  const result = await model.doStream({
    ...prepareCallSettings({}),
    tools,
    toolChoice,
    prompt: promptMessages,
    providerOptions: r.providerOptions,
    abortSignal: r.abortSignal,
    includeRawChunks: false,
  });
  return new ModelStep(model, partReaderOf(result), r.tools, toolChoice?.type === 'none', r.abortSignal);
}

export class ModelStep {
  /** Tool calls as parsed so far (provider-executed ones too), in stream order. */
  readonly toolCalls: StepToolCall[] = [];
  /** The last error of the stream (an `error` part, a tool_choice violation, an empty stream). */
  failure: unknown = undefined;
  /** Set when the stream ended with a finish or some output (streamText's `finish-step`). */
  finished: { finishReason: string; usage: LanguageModelUsage } | undefined;

  private readonly content: Content[] = [];
  private readonly openText = new Map<string, Content & { type: 'text' }>();
  private readonly openReasoning = new Map<string, Content & { type: 'reasoning' }>();
  private readonly callsById = new Map<string, StepToolCall>();
  /** Tool parts held back under tool_choice none: any tool call among them fails the step. */
  private readonly withheld: (PartOf<'tool-call'> | PartOf<'tool-result'>)[] = [];
  private warnings: Warnings = [];
  private usage: LanguageModelUsage | undefined;
  private finishReason = 'other';
  private sawTerminal = false;
  private sawOutput = false;

  constructor(
    private readonly model: ModelV3,
    private readonly reader: PartReader,
    private readonly tools: ToolSet | undefined,
    private readonly withhold: boolean,
    private readonly signal: AbortSignal,
  ) {}

  /** The answer's text deltas as they arrive; every other part is recorded on the way. */
  async *textDeltas(): AsyncGenerator<string> {
    const reader = this.reader;
    let done = false;
    try {
      for (;;) {
        // A network read brings several parts at once: those are taken without a promise each (partReaderOf).
        let part = reader.readNow?.();
        if (part === undefined) {
          const next = await reader.read();
          if (next.done) break;
          part = next.value;
        }
        // streamText stops delivering parts once the call is aborted; the caller then throws the abort reason.
        if (this.signal.aborted) return;
        let delta = this.accept(part);
        if (isPromise(delta)) delta = await delta;
        if (delta !== undefined) yield delta;
      }
      done = true;
      this.end();
    } finally {
      if (!done) await reader.cancel().catch(() => undefined);
    }
  }

  /** The assistant message (and, for invalid tool calls, the SDK's error results), as streamText's response.messages. */
  responseMessages(): ModelMessage[] {
    const assistant: Record<string, unknown>[] = [];
    const toolErrors: Record<string, unknown>[] = [];
    for (const c of this.content) {
      if (c.type === 'text') {
        if (c.text.length > 0) assistant.push({ type: 'text', text: c.text, providerOptions: c.providerMetadata });
      } else if (c.type === 'reasoning') {
        assistant.push({ type: 'reasoning', text: c.text, providerOptions: c.providerMetadata });
      } else if (c.type === 'file') {
        assistant.push({ type: 'file', data: c.data, mediaType: c.mediaType, providerOptions: c.providerMetadata });
      } else if (c.type === 'tool-call') {
        const { call } = c;
        const input = call.invalid && typeof call.input !== 'object' ? {} : call.input;
        assistant.push({ type: 'tool-call', toolCallId: call.toolCallId, toolName: call.toolName, input, providerExecuted: c.providerExecuted, providerOptions: c.providerMetadata });
        // The SDK answers an invalid client-side call itself with an error result.
        if (call.invalid && !c.providerExecuted) {
          toolErrors.push({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'error-text', value: errorMessage(c.error) } });
        }
      } else if (c.type === 'tool-result') {
        const output = c.isError
          ? { type: 'error-json', value: c.output ?? null }
          : typeof c.output === 'string'
            ? { type: 'text', value: c.output }
            : { type: 'json', value: c.output ?? null };
        assistant.push({ type: 'tool-result', toolCallId: c.toolCallId, toolName: c.toolName, output, providerOptions: c.providerMetadata });
      } else {
        assistant.push({ type: 'tool-approval-request', approvalId: c.approvalId, toolCallId: c.toolCallId });
      }
    }
    const messages: ModelMessage[] = [];
    if (assistant.length > 0) messages.push({ role: 'assistant', content: assistant } as ModelMessage);
    if (toolErrors.length > 0) messages.push({ role: 'tool', content: toolErrors } as ModelMessage);
    return messages;
  }

  /**
   * Records one part; returns the text it adds to the answer, undefined when it is not a text delta. Synchronous but
   * for a tool call, whose arguments are parsed by the SDK's (asynchronous) JSON parser.
   */
  private accept(part: StreamPart): Awaitable<string | undefined> {
    if (this.withhold) {
      if (part.type === 'tool-input-start' || part.type === 'tool-input-delta' || part.type === 'tool-input-end' || part.type === 'tool-approval-request') return undefined;
      if (part.type === 'tool-call' || part.type === 'tool-result') {
        this.withheld.push(part);
        return undefined;
      }
    }
    if (OUTPUT_PARTS.has(part.type)) this.sawOutput = true;
    switch (part.type) {
      case 'stream-start':
        this.warnings = part.warnings;
        return undefined;
      case 'text-start': {
        const c = { type: 'text' as const, text: '', providerMetadata: part.providerMetadata };
        this.openText.set(part.id, c);
        this.content.push(c);
        return undefined;
      }
      case 'text-delta': {
        // streamText drops empty deltas that carry no metadata.
        if (part.delta.length === 0 && part.providerMetadata == null) return undefined;
        const c = this.openText.get(part.id);
        if (!c) this.fail(`text part ${part.id} not found`);
        else {
          c.text += part.delta;
          c.providerMetadata = part.providerMetadata ?? c.providerMetadata;
        }
        return part.delta;
      }
      case 'text-end':
      case 'reasoning-end': {
        const open = part.type === 'text-end' ? this.openText : this.openReasoning;
        const c = open.get(part.id);
        if (!c) this.fail(`${part.type === 'text-end' ? 'text' : 'reasoning'} part ${part.id} not found`);
        else {
          c.providerMetadata = part.providerMetadata ?? c.providerMetadata;
          open.delete(part.id);
        }
        return undefined;
      }
      case 'reasoning-start': {
        const c = { type: 'reasoning' as const, text: '', providerMetadata: part.providerMetadata };
        this.openReasoning.set(part.id, c);
        this.content.push(c);
        return undefined;
      }
      case 'reasoning-delta': {
        const c = this.openReasoning.get(part.id);
        if (!c) this.fail(`reasoning part ${part.id} not found`);
        else {
          c.text += part.delta;
          c.providerMetadata = part.providerMetadata ?? c.providerMetadata;
        }
        return undefined;
      }
      case 'file': {
        const data = typeof part.data === 'string' ? part.data : Buffer.from(part.data).toString('base64');
        this.content.push({ type: 'file', data, mediaType: part.mediaType, providerMetadata: part.providerMetadata });
        return undefined;
      }
      case 'tool-call':
        return this.acceptToolCall(part);
      case 'tool-result':
        this.content.push({
          type: 'tool-result',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          output: part.result,
          isError: part.isError === true,
          providerMetadata: part.providerMetadata,
        });
        return undefined;
      case 'tool-approval-request':
        if (!this.callsById.has(part.toolCallId)) {
          this.fail(new ToolCallNotFoundForApprovalError({ toolCallId: part.toolCallId, approvalId: part.approvalId }));
        } else this.content.push({ type: 'tool-approval-request', approvalId: part.approvalId, toolCallId: part.toolCallId });
        return undefined;
      case 'finish': {
        const violated = this.withheld.some((p) => p.type === 'tool-call');
        if (violated) {
          this.fail(
            new ToolChoiceViolationError({
              toolChoice: { type: 'none' },
              finishReason: part.finishReason.unified,
              provider: this.model.provider,
              modelId: this.model.modelId,
              content: this.withheld,
            }),
          );
        }
        this.sawTerminal = true;
        this.usage = asLanguageModelUsage(part.usage);
        this.finishReason = violated ? 'error' : part.finishReason.unified;
        return undefined;
      }
      case 'error':
        this.fail(part.error);
        return undefined;
      default:
        // tool-input-*, source, response-metadata, raw: nothing of them reaches the result.
        return undefined;
    }
  }

  private async acceptToolCall(part: PartOf<'tool-call'>): Promise<undefined> {
    const { call, error } = await this.parseToolCall(part);
    this.callsById.set(call.toolCallId, call);
    this.toolCalls.push(call);
    this.content.push({ type: 'tool-call', call, providerExecuted: part.providerExecuted, providerMetadata: part.providerMetadata, error });
    return undefined;
  }

  private fail(error: unknown) {
    this.failure = error;
    this.sawTerminal = true;
    this.finishReason = 'error';
  }

  /** The stream closed: streamText's finish-step, or its error for a stream that said nothing. */
  private end() {
    if (!this.sawTerminal && !this.sawOutput) {
      this.failure = new NoOutputGeneratedError({ message: 'No output generated. The model stream ended without a finish chunk.' });
      return;
    }
    this.finished = { finishReason: this.finishReason, usage: this.usage ?? asLanguageModelUsage(NULL_USAGE) };
    logWarnings(this.warnings, this.model);
  }

  /** streamText's parseToolCall for our tools (JSON schema without a validator; no repair function). */
  private async parseToolCall(part: PartOf<'tool-call'>): Promise<{ call: StepToolCall; error?: unknown }> {
    const { toolCallId, toolName } = part;
    let error: unknown;
    // Provider-executed dynamic tools (none of ours) are parsed as plain JSON, like declared ones.
    if (this.tools?.[toolName] || (part.providerExecuted && part.dynamic)) {
      if (part.input.trim() === '') return { call: { toolCallId, toolName, input: {}, invalid: false } };
      const parsed = await parseJsonText(part.input);
      if (parsed.ok) return { call: { toolCallId, toolName, input: parsed.value, invalid: false } };
      error = new InvalidToolInputError({ toolName, toolInput: part.input, cause: parsed.error });
    } else {
      error = this.tools ? new NoSuchToolError({ toolName, availableTools: Object.keys(this.tools) }) : new NoSuchToolError({ toolName });
    }
    // An invalid call keeps its arguments parsed when they are JSON, else the raw text.
    const raw = await parseJsonText(part.input);
    return { call: { toolCallId, toolName, input: raw.ok ? raw.value : part.input, invalid: true }, error };
  }
}

/** Every part type that counts as output for streamText (an empty stream without finish is an error). */
const OUTPUT_PARTS = new Set<string>([
  'file',
  'source',
  'text-start',
  'text-end',
  'text-delta',
  'reasoning-start',
  'reasoning-end',
  'reasoning-delta',
  'tool-input-start',
  'tool-input-end',
  'tool-input-delta',
  'tool-approval-request',
  'tool-call',
  'tool-result',
]);

const NULL_USAGE = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/** The SDK's secure JSON parse (refuses __proto__ keys), with the error it reports. */
async function parseJsonText(text: string): Promise<{ ok: true; value: unknown } | { ok: false; error: JSONParseError }> {
  const r = await parsePartialJson(text);
  if (r.state === 'successful-parse') return { ok: true, value: r.value };
  let cause: unknown;
  try {
    JSON.parse(text);
    cause = new SyntaxError('Object contains forbidden prototype property');
  } catch (e) {
    cause = e;
  }
  return { ok: false, error: new JSONParseError({ text, cause }) };
}

function errorMessage(e: unknown): string {
  if (e == null) return 'unknown error';
  if (typeof e === 'string') return e;
  if (e instanceof Error) return e.message;
  return JSON.stringify(e);
}

let warnedBefore = false;

/** The SDK's warning logger: its global hook (runtime.ts routes it to the log), else the console as it printed. */
function logWarnings(warnings: Warnings, model: ModelV3) {
  if (warnings.length === 0) return;
  const logger = globalThis.AI_SDK_LOG_WARNINGS;
  if (logger === false) return;
  if (typeof logger === 'function') return logger({ warnings, provider: model.provider, model: model.modelId });
  if (!warnedBefore) {
    warnedBefore = true;
    console.info('AI SDK Warning System: To turn off warning logging, set the AI_SDK_LOG_WARNINGS global to false.');
  }
  const prefix = `AI SDK Warning (${model.provider} / ${model.modelId}):`;
  for (const w of warnings) {
    const details = 'details' in w && w.details ? ` ${w.details}` : '';
    if (w.type === 'unsupported') console.warn(`${prefix} The feature "${w.feature}" is not supported.${details}`);
    else if (w.type === 'compatibility') console.warn(`${prefix} The feature "${w.feature}" is used in a compatibility mode.${details}`);
    else if (w.type === 'other') console.warn(`${prefix} ${w.message}`);
    else console.warn(`${prefix} ${JSON.stringify(w, null, 2)}`);
  }
}
