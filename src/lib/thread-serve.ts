import { parentPort } from 'node:worker_threads';

/**
 * The thread side of thread-pool.ts: answers each job with `handle`'s value, or its error's message, and says when
 * the module is loaded (the jobs' deadlines start then). Whatever `handle` throws fails that job only.
 */
export function serveThread<Q, R>(handle: (request: Q) => R | Promise<R>): void {
  const port = parentPort!;
  port.on('message', async ({ id, request }: { id: number; request: Q }) => {
    try {
      const value = await handle(request);
      port.postMessage({ id, ok: true, value });
    } catch (e) {
      port.postMessage({ id, ok: false, reason: (e instanceof Error ? e.message : String(e)).slice(0, 2000) });
    }
  });
  port.postMessage({ ready: true });
}
