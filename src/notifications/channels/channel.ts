import type { DeliveryRow } from '../notifications.repository.js';

/** What one attempt of a delivery came to. */
export type SendOutcome =
  | { ok: true; statusCode?: number }
  | {
      ok: false;
      /** false: trying again cannot help (a 4xx answer, a refused address, a missing secret): given up at once. */
      retry: boolean;
      error: string;
      statusCode?: number;
      /** The receiver's Retry-After, in ms. */
      retryAfterMs?: number;
    };

/** One channel kind (webhook, slack, email, callback): sends a delivery's payload to its target, once. */
export interface ChannelSender {
  send(d: DeliveryRow, target: unknown, signal: AbortSignal): Promise<SendOutcome>;
}

/** Answers that are worth trying again: timeouts, rate limits, server errors. Other 4xx are the request's fault. */
const RETRYABLE = new Set([408, 409, 425, 429]);

/** Reads an HTTP answer as an outcome; the body is drained (a few KB at most are kept for the error). */
export async function httpOutcome(res: Response, now: number): Promise<SendOutcome> {
  const text = await readSome(res, 512);
  if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status };
  const retry = res.status >= 500 || RETRYABLE.has(res.status);
  const detail = text.trim() ? `: ${text.trim().slice(0, 200)}` : '';
  return { ok: false, retry, statusCode: res.status, error: `HTTP ${res.status}${detail}`, retryAfterMs: retryAfterMs(res.headers.get('retry-after'), now) };
}

/** `Retry-After` as seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

async function readSome(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // A receiver that breaks its answer off has answered all the same: its status decides.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, max);
}
