/** A background component of the worker role (task runner, indexer, dispatcher): started and stopped by the server. */
export interface Startable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A resource with nothing to start that must be closed when the process stops (a worker pool, a connection). */
export function closeOnStop(close: () => Promise<unknown> | unknown): Startable {
  return { start: async () => {}, stop: async () => void (await close()) };
}
