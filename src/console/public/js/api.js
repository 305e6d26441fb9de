import { SseParser } from './sse.js';

/**
 * The console's only way to the server: the public /v1 API with the key the user signed in with. The key lives
 * in sessionStorage (gone when the tab closes, never in a URL or a cookie) and travels as `x-api-key`.
 */
const KEY_STORAGE = 'agentry.apiKey';

export const session = {
  get key() {
    return sessionStorage.getItem(KEY_STORAGE);
  },
  signIn(key) {
    sessionStorage.setItem(KEY_STORAGE, key);
  },
  signOut() {
    sessionStorage.removeItem(KEY_STORAGE);
  },
};

export class ApiError extends Error {
  constructor(status, detail) {
    super(describe(status, detail));
    this.status = status;
    this.detail = detail;
  }
}

/** The API's error body -> one readable sentence (422 lists each problem with its location). */
function describe(status, detail) {
  if (Array.isArray(detail)) return detail.map((d) => `${(d.loc ?? []).join('.')}: ${d.msg}`).join('; ');
  if (typeof detail === 'string') return detail;
  return status ? `Request failed (HTTP ${status})` : 'The server could not be reached';
}

/** Called when the key stops working (see keyRefused): the app signs the user out and shows the sign-in form. */
let onUnauthorized = () => {};
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

/**
 * Whether a refusal means the key itself is no longer accepted (401, or the 403 "Invalid API key"), as opposed to a
 * refusal of one operation (403 for a role, developer access off, a pre-auth token): only the first signs out.
 */
export function keyRefused(status, detail) {
  return status === 401 || (status === 403 && detail === 'Invalid API key');
}

export function path(strings, ...values) {
  return strings.reduce((acc, s, k) => acc + s + (k < values.length ? encodeURIComponent(String(values[k])) : ''), '');
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A JSON request; throws ApiError with the server's detail. `key` overrides the session's (sign-in check). */
export async function api(method, url, { body, key, signal } = {}) {
  const headers = { accept: 'application/json', 'x-api-key': key ?? session.key ?? '' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, null);
  }
  const json = await readBody(res);
  if (!res.ok) {
    const detail = json && typeof json === 'object' ? json.detail : null;
    if (key === undefined && keyRefused(res.status, detail)) onUnauthorized();
    throw new ApiError(res.status, detail);
  }
  return json;
}

/**
 * Reads a server-sent event stream with fetch (EventSource cannot send headers). Calls onEvent for each event
 * and resolves when the server ends the stream; rejects on HTTP errors. Abort with `signal`.
 */
export async function streamEvents(url, { onEvent, signal, lastEventId }) {
  const headers = { accept: 'text/event-stream', 'x-api-key': session.key ?? '' };
  if (lastEventId) headers['last-event-id'] = lastEventId;
  const res = await fetch(url, { headers, signal, cache: 'no-store' });
  if (!res.ok) {
    const detail = await errorDetail(res);
    if (keyRefused(res.status, detail)) onUnauthorized();
    throw new ApiError(res.status, detail);
  }
  return readSse(res, onEvent);
}

/** A response's body: its JSON, its text when it is not JSON, null when empty. */
export async function readBody(res) {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** The `detail` of a refused request's JSON body, or null. */
export async function errorDetail(res) {
  try {
    return (await res.json()).detail;
  } catch {
    return null;
  }
}

/** Feeds a server-sent event body to onEvent until the server ends it; resolves to the last event id. */
export async function readSse(res, onEvent) {
  const parser = new SseParser(onEvent);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return parser.lastEventId;
}
