import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { LanguageModel } from 'ai';
import { linkedController } from '../lib/abort.js';
import { partReaderOf, readableOfParts, type PartReader } from './chat-completions-stream.js';
import { wrapModel } from './wrap-model.js';

/**
 * The bounds of one LLM call (docs/operations.md#settings). Without them an endpoint that never answers, or that
 * streams small deltas for ever, held a worker slot for ever: neither the SDKs nor our transports give a call a
 * deadline of its own, and the per-event size limit (MAX_LLM_MESSAGE_BYTES) does not bound the number of events.
 *
 * - `firstByteMs`: the wait for the response headers of one HTTP attempt. It is a transport failure like a refused
 *   connection, so the retry policy (retrying-fetch.ts) tries again: nothing was streamed yet, a retry repeats nothing.
 * - `idleMs`: the longest silence between two streamed parts once the answer has begun. Reasoning models think in
 *   silence for minutes on some APIs (nothing is streamed until the first token), hence a default above the first byte.
 * - `totalMs`: the whole call, from the request to the last part, retries included.
 * - `maxAnswerChars`: the characters one answer may stream (text, reasoning, tool-call arguments).
 * The last three fail the call without a retry: part of the answer has been streamed (chunk events) already.
 */
export interface LlmCallLimits {
  firstByteMs: number;
  idleMs: number;
  totalMs: number;
  maxAnswerChars: number;
}

export const DEFAULT_LLM_CALL_LIMITS: LlmCallLimits = { firstByteMs: 120_000, idleMs: 300_000, totalMs: 1_800_000, maxAnswerChars: 4_000_000 };

/** A call that passed one of its bounds; the message names the setting (it reaches the task result and the trace). */
export class LlmCallLimitError extends Error {
  constructor(message: string) {
    super(message);
    // Not 'TimeoutError': the SDK takes that name for an abort of the caller's own and passes it through as one.
    this.name = 'LlmCallLimitError';
  }
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/** Told by the transport when an attempt of a bounded call got its response headers, by the call's signal. */
const headersArrived = new WeakMap<AbortSignal, () => void>();

/**
 * `fetch` whose every attempt fails with LlmCallLimitError when no response headers came within `ms`; the caller's
 * own signal still aborts the request and, after the headers, its body.
 */
export function withFirstByteDeadline(inner: typeof globalThis.fetch, ms: number): typeof globalThis.fetch {
  return async (input, init) => {
    const callers = init?.signal ?? undefined;
    // Linked for the whole exchange (the caller's abort must still end the body after the headers), not released:
    // the caller's signal is the call's own (withCallLimits), which goes with the call.
    const own = linkedController(callers).controller;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      own.abort(new LlmCallLimitError(`no response from the endpoint within ${seconds(ms)} (AGENTRY_LLM_FIRST_BYTE_TIMEOUT_MS)`));
    }, ms).unref();
    try {
      // Spread keeps symbol-keyed options (safe-fetch's NODE_BODY).
      const res = await inner(input, { ...init, signal: own.signal });
      if (callers) headersArrived.get(callers)?.();
      return res;
    } catch (e) {
      if (timedOut && !callers?.aborted) throw own.signal.reason;
      throw e;
    } finally {
      clearTimeout(timer);
    }
  };
}

type StreamResult = Awaited<ReturnType<LanguageModelV3['doStream']>>;

/**
 * The model with every streamed call bounded by `limits` (idle, total, size; the first byte is the transport's, see
 * withFirstByteDeadline). A model that is not a v3 provider model is returned as it is (the runtime refuses those).
 */
export function withCallLimits(
  model: LanguageModel,
  limits: LlmCallLimits,
  /** Told of the signal each call is made with in place of the caller's (LlmService finds a run's retries by it). */
  onCallSignal?: (callers: AbortSignal, call: AbortSignal) => void,
): LanguageModel {
  if (typeof model === 'string' || model.specificationVersion !== 'v3') return model;
  const inner = model;
  return wrapModel(inner, {
    doStream: async (options) => {
      const startedAt = Date.now();
      // The call's own signal: a bound passed ends the HTTP exchange itself, not only our reading of it. Linked to the
      // run's until the answer is read (BoundedPartReader releases it), so one run's calls do not pile up listeners.
      const callers = options.abortSignal;
      const link = linkedController(callers);
      const own = link.controller;
      const signal = own.signal;
      if (callers) onCallSignal?.(callers, signal);
      // doStream resolves with the headers, or (Anthropic) with the first event after them: until the headers only the
      // call's deadline (and the transport's first-byte one per attempt) applies, after them the idle bound too.
      const expire = (message: string) => own.abort(new LlmCallLimitError(message));
      let timer = setTimeout(() => expire(totalMessage(limits)), limits.totalMs).unref();
      headersArrived.set(signal, () => {
        clearTimeout(timer);
        const left = startedAt + limits.totalMs - Date.now();
        timer = (left <= limits.idleMs ? setTimeout(() => expire(totalMessage(limits)), left) : setTimeout(() => expire(idleMessage(limits)), limits.idleMs)).unref();
      });
      try {
        return new LimitedStreamResult(await inner.doStream({ ...options, abortSignal: signal }), limits, startedAt, own, link.release);
      } catch (e) {
        link.release();
        if (own.signal.aborted && !callers?.aborted) throw own.signal.reason;
        throw e;
      } finally {
        clearTimeout(timer);
        headersArrived.delete(signal);
      }
    },
  });
}

const totalMessage = (l: LlmCallLimits) => `the answer did not end within ${seconds(l.totalMs)} (AGENTRY_LLM_CALL_TIMEOUT_MS)`;
const idleMessage = (l: LlmCallLimits) => `the answer streamed nothing for ${seconds(l.idleMs)} (AGENTRY_LLM_IDLE_TIMEOUT_MS)`;

/** A stream result whose parts are read through a BoundedPartReader (partReaderOf takes `partReader()` first). */
class LimitedStreamResult implements StreamResult {
  readonly request: StreamResult['request'];
  readonly response: StreamResult['response'];
  private built: ReadableStream<LanguageModelV3StreamPart> | undefined;

  constructor(
    private readonly inner: StreamResult,
    private readonly limits: LlmCallLimits,
    private readonly startedAt: number,
    private readonly call: AbortController,
    private readonly release: () => void,
  ) {
    this.request = inner.request;
    this.response = inner.response;
  }

  get stream(): ReadableStream<LanguageModelV3StreamPart> {
    return (this.built ??= readableOfParts(this.partReader()));
  }

  partReader(): PartReader {
    return new BoundedPartReader(partReaderOf(this.inner), this.limits, this.startedAt, this.call, this.release);
  }
}

/**
 * Reads the parts of one answer within the idle, total and size bounds. One timer per call, re-armed only when it
 * fires (a read just notes the time), so a long answer costs no timer per part.
 */
class BoundedPartReader implements PartReader {
  private chars = 0;
  private lastPartAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private failure: LlmCallLimitError | undefined;
  private closed = false;
  /** Tool calls whose arguments were streamed (counted as deltas): their final tool-call part is not counted again. */
  private readonly streamedCalls = new Set<string>();
  /** Ends the read in progress, if any, when a bound is passed: it may be waiting for an endpoint that sends nothing. */
  private interrupt: ((e: LlmCallLimitError) => void) | undefined;

  constructor(
    private readonly inner: PartReader,
    private readonly limits: LlmCallLimits,
    private readonly startedAt: number,
    private readonly call: AbortController,
    private readonly release: () => void,
  ) {
    this.check();
  }

  readNow(): LanguageModelV3StreamPart | undefined {
    if (this.failure) return undefined;
    const part = this.inner.readNow?.();
    if (part !== undefined) this.count(part);
    // Past the size bound the part is withheld: the next read() throws.
    return this.failure ? undefined : part;
  }

  async read(): Promise<ReadableStreamReadResult<LanguageModelV3StreamPart>> {
    if (this.failure) throw this.failure;
    let next: ReadableStreamReadResult<LanguageModelV3StreamPart>;
    try {
      // Not Promise.race with a shared promise: each race would leave a reaction on it until the call ends.
      next = await new Promise<ReadableStreamReadResult<LanguageModelV3StreamPart>>((resolve, reject) => {
        this.interrupt = reject;
        this.inner.read().then(resolve, reject);
      });
    } catch (e) {
      this.close();
      throw this.failure ?? e;
    } finally {
      this.interrupt = undefined;
    }
    if (next.done) {
      this.close();
      return next;
    }
    this.lastPartAt = Date.now();
    this.count(next.value);
    if (this.failure) throw this.failure;
    return next;
  }

  cancel(reason?: unknown): Promise<void> {
    this.close();
    return this.inner.cancel(reason);
  }

  /** Fails the call once the idle or total bound has passed, else sleeps until the nearer of the two could. */
  private check(): void {
    if (this.closed) return;
    const now = Date.now();
    const totalLeft = this.startedAt + this.limits.totalMs - now;
    const idleLeft = this.lastPartAt + this.limits.idleMs - now;
    if (totalLeft <= 0) return this.fail(totalMessage(this.limits));
    if (idleLeft <= 0) return this.fail(idleMessage(this.limits));
    this.timer = setTimeout(() => this.check(), Math.min(totalLeft, idleLeft)).unref();
  }

  private count(part: LanguageModelV3StreamPart): void {
    if (part.type === 'text-delta' || part.type === 'reasoning-delta') this.chars += part.delta.length;
    else if (part.type === 'tool-input-delta') {
      this.chars += part.delta.length;
      this.streamedCalls.add(part.id);
    } else if (part.type === 'tool-call' && !this.streamedCalls.has(part.toolCallId)) this.chars += part.input.length;
    else return;
    if (this.chars > this.limits.maxAnswerChars) this.fail(`the answer is longer than ${this.limits.maxAnswerChars} characters (AGENTRY_LLM_MAX_ANSWER_CHARS)`);
  }

  private fail(message: string): void {
    if (this.closed) return;
    const e = new LlmCallLimitError(message);
    this.failure = e;
    this.close();
    this.interrupt?.(e);
    // Ends the HTTP answer: the body is cancelled and the request aborted (the connection closed).
    void this.inner.cancel(e).catch(() => undefined);
    this.call.abort(e);
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.release();
  }
}
