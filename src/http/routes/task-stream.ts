import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TaskEvent } from '../../tasks/task.types.js';

const KEEPALIVE_MS = 15_000;

/**
 * Sends task events as Server-Sent Events: `id: <seq>` (resume with Last-Event-ID) and `data: <envelope>`.
 * The stream ends when `events` ends (the task is final) or the client goes away.
 */
export async function sendEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  events: (signal: AbortSignal) => AsyncIterable<(TaskEvent | Record<string, unknown>) & { seq: number }>,
): Promise<FastifyReply> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // Proxies (nginx) must not buffer a live stream.
    'x-accel-buffering': 'no',
    'x-request-id': String(request.id),
  });
  const abort = new AbortController();
  raw.on('close', () => abort.abort());
  const keepalive = setInterval(() => raw.write(': keep-alive\n\n'), KEEPALIVE_MS);
  try {
    for await (const e of events(abort.signal)) {
      const { seq, ...envelope } = e;
      raw.write(`id: ${seq}\ndata: ${JSON.stringify(envelope)}\n\n`);
    }
  } catch (err) {
    request.log.error({ err }, 'task event stream failed');
  } finally {
    clearInterval(keepalive);
    raw.end();
  }
  return reply;
}

export function wantsEventStream(request: FastifyRequest): boolean {
  return /text\/event-stream/i.test(String(request.headers.accept ?? ''));
}

/** The SSE resume point: Last-Event-ID, when it is a sequence number. */
export function lastEventId(request: FastifyRequest): number {
  const v = Number(request.headers['last-event-id']);
  return Number.isInteger(v) && v > 0 ? v : 0;
}
