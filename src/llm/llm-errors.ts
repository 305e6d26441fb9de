import { APICallError, RetryError } from 'ai';
import { isEgressRefused } from '../net/safe-fetch.js';
import { AnswerTooLarge } from '../net/bounded-response.js';
import { findCause } from '../lib/error-cause.js';

/**
 * Turns what a provider call threw into a message fit for a task result: provider, HTTP status and the
 * provider's own error message, never a stack trace or a credential.
 */
export function describeLlmError(provider: string, model: string, e: unknown): string {
  const err = RetryError.isInstance(e) ? (e.lastError ?? e) : e;
  if (isEgressRefused(err)) return `LLM provider "${provider}" is not reachable: ${(err as Error).message}`;
  const tooLarge = findCause(err, (c) => c instanceof AnswerTooLarge);
  if (tooLarge) return `LLM provider "${provider}" (model "${model}") failed: ${(tooLarge as Error).message}`;
  if (APICallError.isInstance(err)) {
    const detail = providerMessage(err.responseBody) ?? err.message;
    const status = err.statusCode ? `HTTP ${err.statusCode}` : 'request failed';
    return `LLM provider "${provider}" (model "${model}") failed: ${status}: ${truncate(detail, 500)}`;
  }
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  const message = err instanceof Error ? err.message : String(err);
  return `LLM provider "${provider}" (model "${model}") failed: ${truncate(message + cause, 500)}`;
}

/** OpenAI, Anthropic and Google all nest a `message` under `error`. */
function providerMessage(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (parsed.error && typeof parsed.error.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return body;
}

function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n) + '…' : s;
}
