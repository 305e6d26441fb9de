import { isEgressRefused } from '../net/safe-fetch.js';

/**
 * Retries LLM HTTP calls that fail to connect or are answered 408, 429 or 5xx, honouring Retry-After (seconds or
 * an HTTP date) and retry-after-ms, within bounds. It wraps the transport instead of using the SDK's own retries so
 * the policy is one place, bounded, and identical for every provider, streaming or not (the status arrives before
 * any streamed body).
 */

export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Backoff when the server gives no Retry-After: base * 2^attempt. */
  baseDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is returned at once. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 30_000 };

/** Called before each wait, so the log can show retries; status 0 is a failed connection. */
export type RetryListener = (info: { attempt: number; status: number; delayMs: number; url: string }) => void;

const RETRYABLE = (status: number) => status === 429 || status === 408 || (status >= 500 && status <= 599);

/** Milliseconds to wait as the response asks, or undefined when it does not say. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get('retry-after');
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.max(0, Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function urlOf(input: string | URL | Request): string {
  return String(input instanceof Request ? input.url : input);
}

export function createRetryingFetch(
  inner: typeof globalThis.fetch,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  onRetry?: RetryListener,
): typeof globalThis.fetch {
  const retrying = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await inner(input, init);
      } catch (e) {
        // A connection that failed (reset, a keep-alive socket closed by the server as it was reused) is retried
        // like a 503; an abort or a refusal of the egress policy is final.
        if (init?.signal?.aborted || isEgressRefused(e) || attempt >= policy.maxRetries) throw e;
        const delayMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
        onRetry?.({ attempt: attempt + 1, status: 0, delayMs, url: urlOf(input) });
        await sleep(delayMs, init?.signal);
        continue;
      }
      if (!RETRYABLE(res.status) || attempt >= policy.maxRetries) return res;
      const asked = retryAfterMs(res.headers);
      if (asked !== undefined && asked > policy.maxDelayMs) return res;
      const delayMs = asked ?? Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
      // Drain the refused answer so the connection can be reused.
      await res.body?.cancel().catch(() => undefined);
      onRetry?.({ attempt: attempt + 1, status: res.status, delayMs, url: urlOf(input) });
      await sleep(delayMs, init?.signal);
    }
  };
  return retrying as typeof globalThis.fetch;
}
