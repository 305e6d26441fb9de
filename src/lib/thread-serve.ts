import { parentPort } from 'node:worker_threads';

/**
 * The thread side of thread-pool.ts: answers each job with `handle`'s value, or its error's message, and says when
 * the module is loaded (the jobs' deadlines start then). Whatever `handle` throws fails that job only. `onRetire`
 * runs when the pool lets the thread go after its current job; the thread then ends.
 */
export function serveThread<Q, R>(handle: (request: Q) => R | Promise<R>, onRetire?: () => void): void {
  const port = parentPort!;
  port.on('message', async (msg: { id: number; request: Q } | 'retire') => {
    // The pool let this thread go (thread-pool.ts, `letGo: 'retire'`): release what the module holds and end.
    if (msg === 'retire') {
      onRetire?.();
      // Ends this thread only. Waiting for it to end by itself is not enough: from the sources the type-stripping
      // hooks registered in the thread (ts-worker.ts) keep it alive. No job is running here, so nothing native is
      // interrupted.
      process.exit(0);
    }
    const { id, request } = msg;
    try {
      const value = await handle(request);
      port.postMessage({ id, ok: true, value });
    } catch (e) {
      port.postMessage({ id, ok: false, reason: (e instanceof Error ? e.message : String(e)).slice(0, 2000) });
    }
  });
  port.postMessage({ ready: true });
}
