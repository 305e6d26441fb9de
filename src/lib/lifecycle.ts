/** A background component of the worker role (task runner, indexer, dispatcher): started and stopped by the server. */
export interface Startable {
  start(): Promise<void>;
  stop(): Promise<void>;
}
