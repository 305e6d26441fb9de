import { APICallError, RetryError, type ModelMessage } from 'ai';
import { findCause } from '../lib/error-cause.js';

/**
 * `with_auto_context_management` (default true; docs/contract.md#context-management): when the provider refuses a
 * model call because the conversation exceeds the model's context window, the run trims the conversation and calls
 * again, instead of failing. Trimmed first: the oldest half of the thread's earlier runs (history), a whole
 * exchange at a time; then the oldest half of this run's tool results that are not the latest step's, replaced by a
 * note; last, the latest step's results are cut to a quarter. The system prompt and this run's user message are never
 * touched: a request that does not fit without them fails as before. With the setting false, the refusal fails the
 * run (the caller wants every message sent or none).
 *
 * The model's window is not known here (the catalog does not carry it, and custom endpoints serve any model), so the
 * provider's refusal is the signal: one failed call (a 400, traced as an `llm_call` with its error) per trim.
 */

/** Trims one run may make before it gives up with the provider's refusal. */
export const MAX_CONTEXT_TRIMS = 6;

/** What an elided tool result says in its place. */
export const ELIDED_RESULT = '[This tool result was removed to fit the model context window.]';

/** How a cut result of the latest step ends. */
const CUT_MARK = 'characters removed to fit the model context window]';

/** The smallest a cut result of the latest step becomes. */
const MIN_CUT_CHARS = 2_000;

/** The providers' words for "the prompt is larger than the model's context window" (OpenAI, Anthropic, Google, vLLM, Ollama). */
const OVERFLOW =
  /context[_ ]length[_ ]exceeded|maximum context length|context window|prompt is too long|too many (input )?tokens|exceeds the maximum (number of )?(input )?tokens|input is too long|reduce the length of the messages/i;

/** Whether a failed model call was refused for the conversation's size (a 400 or 413 saying so). */
export function isContextOverflow(e: unknown): boolean {
  const found = findCause(e, (c) => APICallError.isInstance(c) || RetryError.isInstance(c));
  const api = RetryError.isInstance(found) ? found.lastError : found;
  if (!APICallError.isInstance(api)) return false;
  if (api.statusCode !== 400 && api.statusCode !== 413) return false;
  return OVERFLOW.test(`${api.message} ${api.responseBody ?? ''}`);
}

export interface Trim {
  /** Messages of earlier runs removed. */
  removedMessages: number;
  /** Tool results of this run replaced by ELIDED_RESULT, or cut. */
  elidedResults: number;
  /** Where this run's user message now is (history before it). */
  historyEnd: number;
}

/**
 * Trims `messages` in place, once; `historyEnd` is the index of this run's user message. Returns what it did, or
 * undefined when nothing is left to trim.
 */
export function trimForContext(messages: ModelMessage[], historyEnd: number): Trim | undefined {
  if (historyEnd > 0) {
    // The oldest half of the history, then whatever would start the rest without its call (orphan tool results).
    let cut = Math.max(1, Math.floor(historyEnd / 2));
    while (cut < historyEnd && messages[cut]!.role === 'tool') cut++;
    messages.splice(0, cut);
    return { removedMessages: cut, elidedResults: 0, historyEnd: historyEnd - cut };
  }
  const toolMessages = messages.flatMap((m, i) => (m.role === 'tool' ? [i] : []));
  const latest = toolMessages.at(-1);
  const older = toolMessages.filter((i) => i !== latest).flatMap((i) => resultParts(messages[i]!).filter((p) => !isElided(p)));
  if (older.length > 0) {
    const half = older.slice(0, Math.max(1, Math.ceil(older.length / 2)));
    for (const p of half) p.output = { type: 'text', value: ELIDED_RESULT };
    return { removedMessages: 0, elidedResults: half.length, historyEnd };
  }
  if (latest === undefined) return undefined;
  let cutCount = 0;
  for (const p of resultParts(messages[latest]!)) {
    const value = p.output.value;
    // Once cut, a result stays as it is: cutting it again and again would only spend the run's trims.
    if (typeof value !== 'string' || value.length <= MIN_CUT_CHARS || value.endsWith(CUT_MARK)) continue;
    const keep = Math.max(MIN_CUT_CHARS, Math.floor(value.length / 4));
    p.output = { type: p.output.type, value: `${value.slice(0, keep)}\n[... ${value.length - keep} ${CUT_MARK}` };
    cutCount++;
  }
  return cutCount > 0 ? { removedMessages: 0, elidedResults: cutCount, historyEnd } : undefined;
}

/** A tool result part as the loop writes it: `output` text or error text. */
interface ResultPart {
  type: 'tool-result';
  output: { type: string; value: unknown };
}

function resultParts(m: ModelMessage): ResultPart[] {
  if (m.role !== 'tool' || !Array.isArray(m.content)) return [];
  return (m.content as unknown as ResultPart[]).filter((p) => p.type === 'tool-result' && p.output && typeof p.output === 'object');
}

function isElided(p: ResultPart): boolean {
  return p.output.value === ELIDED_RESULT;
}
