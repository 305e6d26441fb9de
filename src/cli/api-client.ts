import { createParser } from 'eventsource-parser';

/**
 * The command line's client of a running server's /v1 API: the operator's own server at the URL they gave, so a
 * plain fetch (the egress policy guards calls made on a tenant's behalf, not this). Errors carry the server's
 * `detail`, which is what the command prints.
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

export class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async json<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.send(method, path, body, 'application/json');
    const text = await r.text();
    if (!r.ok) throw new ApiError(r.status, describe(r.status, text));
    return (text ? JSON.parse(text) : null) as T;
  }

  /** POSTs and reads the answer as Server-Sent Events, handing each `data:` payload (parsed) to `onEvent`. */
  async stream(path: string, body: unknown, onEvent: (data: unknown) => void): Promise<void> {
    const r = await this.send('POST', path, body, 'text/event-stream');
    if (!r.ok) throw new ApiError(r.status, describe(r.status, await r.text()));
    if (!r.body) return;
    const parser = createParser({ onEvent: (e) => onEvent(JSON.parse(e.data)) });
    const decoder = new TextDecoder();
    for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  }

  private async send(method: string, path: string, body: unknown, accept: string): Promise<Response> {
    const headers: Record<string, string> = { accept };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await this.fetchImpl(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {
      const cause = (e as { cause?: { code?: string } }).cause?.code;
      throw new ApiError(0, `cannot reach ${this.baseUrl}${cause ? ` (${cause})` : ''}: is the server running? (set AGENTRY_URL or --url)`);
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
