import { createParser } from 'eventsource-parser';
import { deadlineSignal } from '../lib/abort.js';
import { readTextBounded } from '../net/bounded-response.js';
import { seconds, urlForMessage } from '../net/document-fetch.js';

/**
 * The command line's client of a running server's /v1 API: the operator's own server at the URL they gave, so a
 * plain fetch (the egress policy guards calls made on a tenant's behalf, not this). Errors carry the server's
 * `detail`, which is what the command prints.
 *
 * Every call is bounded, so a command ends with an error that names the URL instead of hanging or growing without
 * end against a server (or a wrong URL) that stalls or answers without end: a JSON call within `timeoutMs` from the
 * request to the answer's last byte (AGENTRY_CLI_TIMEOUT_MS; above the server's 300 s default for a synchronous
 * invocation); a stream's headers within it too, then at most STREAM_IDLE_MS (or the timeout, if lower) without a
 * byte: the server sends a keep-alive every 15 s, and a run may stream for as long as it runs. An answer, or one
 * event, is at most MAX_ANSWER_BYTES.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const DEFAULT_CLI_TIMEOUT_MS = 600_000;
export const STREAM_IDLE_MS = 60_000;
/** A task's result is at most ~16 MB of UTF-8 (4,000,000 characters); a page of a list far less. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly fetchImpl: typeof fetch = fetch,
    private readonly timeoutMs = DEFAULT_CLI_TIMEOUT_MS,
  ) {}

  async json<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const deadline = deadlineSignal(undefined, this.timeoutMs);
    try {
      const r = await this.send(method, path, body, 'application/json', deadline.signal);
      const text = await readTextBounded(r, MAX_ANSWER_BYTES, () => this.tooLarge(path));
      if (!r.ok) throw new ApiError(r.status, describe(r.status, text));
      return (text ? JSON.parse(text) : null) as T;
    } catch (e) {
      if (deadline.signal.aborted && !(e instanceof ApiError)) throw this.timedOut(path);
      throw e;
    } finally {
      deadline.release();
    }
  }

  /** POSTs and reads the answer as Server-Sent Events, handing each `data:` payload (parsed) to `onEvent`. */
  async stream(path: string, body: unknown, onEvent: (data: unknown) => void): Promise<void> {
    const call = new AbortController();
    const idleMs = Math.min(STREAM_IDLE_MS, this.timeoutMs);
    let failure: ApiError | undefined;
    const expire = (e: ApiError) => {
      failure ??= e;
      call.abort(e);
    };
    let timer = setTimeout(() => expire(this.timedOut(path)), this.timeoutMs);
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => expire(new ApiError(0, `${this.shown(path)} streamed nothing for ${seconds(idleMs)} (no keep-alive either)`)), idleMs);
    };
    try {
      const r = await this.send('POST', path, body, 'text/event-stream', call.signal);
      if (!r.ok) throw new ApiError(r.status, describe(r.status, await readTextBounded(r, MAX_ANSWER_BYTES, () => this.tooLarge(path))));
      if (!r.body) return;
      arm();
      const parser = createParser({
        onEvent: (e) => onEvent(JSON.parse(e.data)),
        maxBufferSize: MAX_ANSWER_BYTES,
        onError: (e) => {
          if (e.type === 'max-buffer-size-exceeded') expire(this.tooLarge(path, 'one event'));
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
        arm();
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (failure) break;
      }
      if (failure) throw failure;
    } catch (e) {
      throw failure ?? e;
    } finally {
      clearTimeout(timer);
      // Ends the body (the connection) when the stream is left early.
      call.abort();
    }
  }

  private shown(path: string): string {
    return urlForMessage(`${this.baseUrl}${path}`);
  }

  private timedOut(path: string): ApiError {
    return new ApiError(0, `${this.shown(path)} did not answer within ${seconds(this.timeoutMs)} (AGENTRY_CLI_TIMEOUT_MS)`);
  }

  private tooLarge(path: string, what = 'the answer'): ApiError {
    return new ApiError(0, `${what} of ${this.shown(path)} is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`);
  }

  private async send(method: string, path: string, body: unknown, accept: string, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.fetchImpl(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    } catch (e) {
      if (signal.aborted) throw e;
      const cause = (e as { cause?: { code?: string } }).cause?.code;
      throw new ApiError(0, `cannot reach ${urlForMessage(this.baseUrl)}${cause ? ` (${cause})` : ''}: is the server running? (set AGENTRY_URL or --url)`);
    }
  }
}

function describe(status: number, text: string): string {
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    if (typeof detail === 'string') return `${status}: ${detail}`;
    if (Array.isArray(detail)) return `${status}: ${detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join('.')}: ${d.msg}`).join('; ')}`;
  } catch {}
  return `${status}: ${text.slice(0, 500) || 'no answer body'}`;
}
