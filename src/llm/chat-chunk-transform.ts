import type { LanguageModelV3FinishReason, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { InvalidResponseDataError, JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import { convertOpenAICompatibleChatUsage, getResponseMetadata, mapOpenAICompatibleFinishReason } from '@ai-sdk/openai-compatible/internal';
import { generateId, secureJsonParse, StreamingToolCallTracker, type StreamingToolCallDelta } from '@ai-sdk/provider-utils';

/**
 * The chunk side of chat-completions-stream.ts: the SDK's per-chunk transform of the Chat Completions stream, ported
 * part for part (test/llm/chat-completions-stream.test.ts holds it to the SDK's own output), and the shape checks
 * that stand in for the SDK's zod validation of each chunk.
 */

type StreamPart = LanguageModelV3StreamPart;

/** A tool-call delta as the chunk carries it (validated by isChunk). */
type ToolCallDelta = StreamingToolCallDelta & { index?: number | null; extra_content?: { google?: { thought_signature?: string | null } | null } | null };

/**
 * The SDK's per-chunk transform of openai-compatible@2 (doStream), over parsed chunks. Parts are collected and taken
 * by the reader; `finish` is the SDK's flush.
 */
export class ChunkTransform {
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
