import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/** One answer the upstream below served: how much of it went out before the client hung up. */
interface Served {
  written: number;
  /** The whole answer went out (the client read it all). */
  finished: boolean;
  /** Resolves when the connection is gone (hung up by the client, or after the last byte). */
  closed: Promise<void>;
}

/** The upstream's answer: this many bytes of JSON-looking padding, written only as fast as the client reads. */
const ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * A remote curl agent that answers far more than the bound, with an honest content-length (/honest) or chunked
 * without one (/chunked). Writes respect backpressure, so `written` is what the client read plus the sockets' buffers.
 */
async function startOversizeUpstream(): Promise<{ url: string; served: Map<string, Served>; close(): Promise<void> }> {
  const served = new Map<string, Served>();
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const server: Server = createServer((req, res: ServerResponse) => {
    req.resume();
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    let onClose!: () => void;
    const s: Served = { written: 0, finished: false, closed: new Promise<void>((r) => (onClose = r)) };
    served.set(path, s);
    res.on('close', onClose);
    res.writeHead(200, path === '/honest' ? { 'content-type': 'text/plain', 'content-length': String(ANSWER_BYTES) } : { 'content-type': 'text/plain' });
    const pump = () => {
      while (!res.destroyed && s.written < ANSWER_BYTES) {
        s.written += chunk.byteLength;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed) {
        s.finished = true;
        res.end();
      }
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * A curl agent's answer is the task result, held in memory and stored: one past MAX_REMOTE_ANSWER_BYTES (1 MB) ends
 * the task `error` saying so, refused by its content-length or, without one, once the streamed bytes pass the bound;
 * the rest is never read (the connection is closed), so an upstream that answers without end cannot fill the memory.
 */
describe.each(TEST_DBS)('curl agent answers past the bound (%s)', (kind) => {
  let t: TasksApp;
  let upstream: Awaited<ReturnType<typeof startOversizeUpstream>>;
  beforeAll(async () => {
    [t, upstream] = await Promise.all([createTasksApp(kind), startOversizeUpstream()]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), upstream?.close()]);
  });

  it.each([
    ['with an honest content-length', '/honest'],
    ['streamed in chunks without a content-length', '/chunked'],
  ])('an answer of 64 MB %s ends the task error at the bound and is not read to its end', async (_, path) => {
    // A generous timeout: the task must end on the bound, not on the deadline.
    const id = await t.createAgent({ type: 'curl', connectivity_details: { url: `${upstream.url}${path}`, method: 'GET', prompt_path: 'q', timeout_seconds: 300 } });
    const r = await t.req('POST', `/v1/agents/${id}/invoke`, { input: { text: 'tell me everything' } });
    expect(r.statusCode, r.body).toBe(200);
    const task = r.json() as Task;
    expect(task.status).toBe('error');
    expect(task.result).toBe('The remote answer is larger than 1000000 bytes');
    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as { type: string; data: Record<string, unknown> }[];
    expect(events.filter((e) => e.type === 'tool_call_result').at(-1)?.data).toMatchObject({ tool_name: 'curl GET', is_error: true });

    // The client hung up: the upstream never got to write the whole answer, only the bound and what the sockets buffer.
    const s = upstream.served.get(path)!;
    await s.closed;
    expect(s.finished).toBe(false);
    expect(s.written).toBeLessThan(ANSWER_BYTES / 2);
  }, 60_000);
});
