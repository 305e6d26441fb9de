/**
 * A limit on what one answer of a tenant-chosen endpoint may take in memory, for client libraries that read answers
 * without one. MCP servers (an inline `url`, a registry entry) and LLM endpoints (`llm_api_base`) are the tenant's
 * choice; the MCP SDK reads a JSON answer whole (`response.json()`) and an event stream one event at a time with no cap
 * on an event's size, and so do the AI SDK's providers. An endless answer grew the API process from 220 MB to 1.9 GB
 * within one `GET /v1/mcp_servers/{id}/tools`, and an agent's run by 0.9 GB on one LLM call.
 * A response passed through here errors its body once a whole answer, or one event of an event stream (the bytes up
 * to a blank line), passes the limit; a response without a body (safe-fetch's NODE_BODY answers) is left as it is.
 */

export class AnswerTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit / 1024 / 1024} MiB`);
    this.name = 'AnswerTooLarge';
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * `onTooLarge` is told when the limit is passed (the MCP SDK reports an event stream that errors to its `onerror`
 * and leaves the request waiting for its timeout, so its caller ends the session instead).
 */
export function boundedResponse(res: Response, limit: number, onTooLarge?: (e: AnswerTooLarge) => void): Response {
  if (!res.body) return res;
  const stream = /text\/event-stream/i.test(res.headers.get('content-type') ?? '');
  // Bytes since the last event boundary (stream) or since the start (whole answer); for a stream, whether the line
  // being read so far holds nothing but CR (a blank line ends an event).
  let size = 0;
  let lineBlank = true;
  const limiter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!stream) {
        size += chunk.byteLength;
      } else {
        for (const byte of chunk) {
          size++;
          if (byte === LF) {
            if (lineBlank) size = 0;
            lineBlank = true;
          } else if (byte !== CR) {
            lineBlank = false;
          }
        }
      }
      if (size <= limit) return controller.enqueue(chunk);
      const e = new AnswerTooLarge(limit);
      controller.error(e);
      onTooLarge?.(e);
    },
  });
  const out = new Response(res.body.pipeThrough(limiter), { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperty(out, 'url', { value: res.url });
  return out;
}

/** `fetch` with every answer bounded as above. */
export function boundedFetch(fetch: typeof globalThis.fetch, limit: number): typeof globalThis.fetch {
  return (input, init) => fetch(input, init).then((res) => boundedResponse(res, limit));
}

/**
 * A whole answer's text, read up to `limit` bytes; past it `tooLarge()` is thrown and the body cancelled (leaving the
 * loop early cancels it, which closes the connection). For answers read whole by our own code.
 */
export async function readTextBounded(res: Response, limit: number, tooLarge: () => Error): Promise<string> {
  return (await readBytesBounded(res, limit, tooLarge)).toString('utf8');
}

/**
 * A whole answer's bytes, read up to `limit`; past it `tooLarge()` is thrown, or without `tooLarge` the first `limit`
 * bytes are returned (the start of an error answer, for a log). Either way the rest is never read: the body is
 * cancelled, which closes the connection.
 */
export async function readBytesBounded(res: Response, limit: number, tooLarge: (() => Error) | undefined): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) {
      if (tooLarge) throw tooLarge();
      chunks.push(chunk.subarray(0, chunk.byteLength - (size - limit)));
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
