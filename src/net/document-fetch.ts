import { deadlineSignal } from '../lib/abort.js';
import { readBytesBounded } from './bounded-response.js';

/**
 * Reads of whole documents at URLs the operator configured (OIDC discovery, a JWKS): jose and `res.json()` read an
 * answer without a size bound, and a deadline that ended only the response head left a slow body unbounded in time.
 */

/** A URL as an error may show it: scheme, host and path. User info and the query may hold credentials. */
export function urlForMessage(url: string | URL): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'an invalid URL';
  }
}

/**
 * A client library's error message with every URL in it shown as urlForMessage shows it: undici's refusal of a URL
 * with user info quotes the whole URL, password and query included.
 */
export function redactUrls(message: string): string {
  return message.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, (u) => urlForMessage(u));
}

/** A document that could not be read within its bounds, or at all; the message names the URL (urlForMessage). */
export class DocumentFetchError extends Error {
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'DocumentFetchError';
  }
}

export interface DocumentBounds {
  /** What is read, as the error names it: "OIDC discovery", "the JWKS". */
  what: string;
  /** From the request to the answer's last byte. */
  timeoutMs: number;
  maxBytes: number;
}

export function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

function sizeOf(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/**
 * `fetch` whose answers are read whole within `bounds` and handed back in memory, else a DocumentFetchError that
 * names the URL and the bound passed (also when the connection fails). The caller's own signal still ends a call;
 * its abort is passed through as it is (jose turns its own deadline's into JWKSTimeout).
 */
export function documentFetch(fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>, bounds: DocumentBounds): typeof globalThis.fetch {
  return async (input, init) => {
    const shown = `${bounds.what} at ${urlForMessage(input instanceof Request ? input.url : input)}`;
    const callers = init?.signal ?? undefined;
    const deadline = deadlineSignal(callers, bounds.timeoutMs);
    try {
      // Spread keeps symbol-keyed options.
      const res = await fetch(input, { ...init, signal: deadline.signal });
      const tooLarge = () => new DocumentFetchError(`${shown} answered more than ${sizeOf(bounds.maxBytes)}`);
      const body = await readBytesBounded(res, bounds.maxBytes, tooLarge);
      const empty = res.status === 204 || res.status === 304 || (res.status >= 100 && res.status < 200);
      return new Response(empty ? null : new Uint8Array(body), { status: res.status, statusText: res.statusText, headers: res.headers });
    } catch (e) {
      if (e instanceof DocumentFetchError || callers?.aborted) throw e;
      if (deadline.signal.aborted) throw new DocumentFetchError(`${shown} did not answer within ${seconds(bounds.timeoutMs)}`, { cause: e });
      const code = (e as { cause?: { code?: unknown } }).cause?.code;
      throw new DocumentFetchError(`${shown} could not be fetched: ${typeof code === 'string' ? code : redactUrls((e as Error).message)}`, { cause: e });
    } finally {
      deadline.release();
    }
  };
}
