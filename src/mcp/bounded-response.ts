/**
 * MCP servers are the tenant's choice (an inline `url`, a registry entry) and the MCP SDK reads their answers without
 * a limit: a JSON answer whole (`response.json()`), an event stream one event at a time with no cap on an event's
 * size. An endless answer grew the API process from 220 MB to 1.9 GB within one `GET /v1/mcp_servers/{id}/tools`.
 * Every response the SDK gets passes through here: a whole answer, or one event of an event stream (the bytes up to
 * a blank line), larger than the limit errors the body, which fails that MCP call with the message below.
 */

/** Most bytes of one JSON answer, or of one event of an event stream. */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024;

export class McpAnswerTooLarge extends Error {
  constructor(limit: number) {
    super(`the answer is larger than ${limit / 1024 / 1024} MiB`);
    this.name = 'McpAnswerTooLarge';
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * `onTooLarge` is told when the limit is passed: the SDK reports an event stream that errors to its `onerror` and
 * leaves the request waiting for its timeout, so the caller ends the session instead.
 */
export function boundedMcpResponse(res: Response, onTooLarge?: (e: McpAnswerTooLarge) => void, limit = MAX_MCP_MESSAGE_BYTES): Response {
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
      const e = new McpAnswerTooLarge(limit);
      controller.error(e);
      onTooLarge?.(e);
    },
  });
  const out = new Response(res.body.pipeThrough(limiter), { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperty(out, 'url', { value: res.url });
  return out;
}
