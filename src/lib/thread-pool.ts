import { Worker } from 'node:worker_threads';
import { FairQueue } from './fair-queue.js';
import { startTsWorker } from './ts-worker.js';

/**
 * Worker threads for untrusted CPU work (tenant JSON Schemas, OpenAPI documents) that must never run on the event
 * loop. Each job has a deadline, counted from the thread's readiness (a fresh thread first loads its libraries),
 * after which the thread is terminated and replaced; each thread has a V8 heap ceiling; waiting jobs are queued per
 * owner (an organization) and served in turn (fair-queue.ts), so one owner's jobs delay another's by at most one
 * job's deadline per thread. A job never throws: it ends `ok` with the thread's answer or not `ok` with a reason.
 *
 * The thread's module answers with `serveThread` (thread-serve.ts).
 */

export interface ThreadPoolOptions {
  /** The caller's `import.meta.url` and the module's path beside it without extension (see ts-worker.ts). */
  base: string;
  module: string;
  /** What the jobs are, for the reasons given ("checking the schema"). */
  doing: string;
  threads: number;
  timeoutMs: number;
  heapMb: number;
  /** Jobs one owner may have waiting; beyond, its new ones fail at once. */
  queuePerOwner: number;
  /**
   * How a thread is let go (a job past its deadline, the pool closing). `terminate` (the default) stops it at once:
   * right for JavaScript work. `retire` posts it 'retire', which it handles between jobs by ending itself (as
   * sqlite-reader.worker.mjs does; serveThread does not):
   * for native work that cannot be stopped from outside, as terminating a libsql thread inside a statement aborts
   * the whole process. Either way the next job gets a fresh thread.
   */
  letGo?: 'terminate' | 'retire';
  /** A thread with no job for this long is let go, and its memory returned; the next job starts a fresh one. */
  idleMs?: number;
  /**
   * The module is plain JavaScript (`<module>.mjs` beside `base`), started as it is: no type-stripping hooks to
   * register in the thread first, so it starts in the time its own imports take, from the sources as from `dist/`.
   */
  plain?: boolean;
}

/**
 * `failed`: the job's handler threw; the others say nothing about the job's input but `timeout` and `crashed`.
 * `busy`: the owner's queue is full; `unstarted`: a fresh thread did not load its libraries in time; `cancelled`: the
 * caller's signal ended the wait before a thread took the job.
 */
export type ThreadFailure = 'timeout' | 'crashed' | 'failed' | 'busy' | 'unstarted' | 'stopping' | 'cancelled';
export type ThreadOutcome<R> = { ok: true; value: R } | { ok: false; failure: ThreadFailure; reason: string };

/** A fresh thread's time to load its libraries (seconds from the sources on a busy machine). */
const STARTUP_MS = 20_000;
/** How long closing waits for retiring threads (`letGo: 'retire'`) to end their current job. */
const CLOSE_WAIT_MS = 5_000;

interface Job<Q, R> {
  owner: string;
  id: number;
  request: Q;
  resolve(v: ThreadOutcome<R>): void;
}

interface Slot<Q, R> {
  worker?: Worker;
  ready?: Promise<void>;
  job?: Job<Q, R>;
  timer?: NodeJS.Timeout;
  idle?: NodeJS.Timeout;
}

export class ThreadPool<Q, R> {
  private readonly slots: Slot<Q, R>[];
  private readonly queue = new FairQueue<Job<Q, R>>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly opts: ThreadPoolOptions) {
    this.slots = Array.from({ length: Math.max(1, opts.threads) }, () => ({}));
  }

  /**
   * `signal`: the caller no longer needs the answer; a job still waiting leaves the queue (`cancelled`), one already
   * on a thread runs to its end (its answer is dropped).
   */
  run(owner: string, request: Q, signal?: AbortSignal): Promise<ThreadOutcome<R>> {
    if (this.closed) return Promise.resolve({ ok: false, failure: 'stopping', reason: 'the service is stopping' });
    if (signal?.aborted) return Promise.resolve({ ok: false, failure: 'cancelled', reason: `${this.opts.doing} was cancelled` });
    if (this.queue.sizeOf(owner) >= this.opts.queuePerOwner) {
      return Promise.resolve({ ok: false, failure: 'busy', reason: `too much ${this.opts.doing} is waiting for this organization; retry shortly` });
    }
    return new Promise((resolve) => {
      const job: Job<Q, R> = { owner, id: this.nextId++, request, resolve };
      if (signal) {
        const onAbort = () => {
          if (this.queue.remove(owner, job)) resolve({ ok: false, failure: 'cancelled', reason: `${this.opts.doing} was cancelled` });
        };
        signal.addEventListener('abort', onAbort, { once: true });
        job.resolve = (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        };
      }
      this.queue.push(owner, job);
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const stopping = { ok: false, failure: 'stopping', reason: 'the service is stopping' } as const;
    for (const job of this.queue.drain()) job.resolve(stopping);
    for (const slot of this.slots) {
      clearTimeout(slot.idle);
      this.finish(slot, stopping);
    }
    // A retiring thread inside a long job is not waited for past CLOSE_WAIT_MS: the process may end around it.
    const waited = new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref());
    await Promise.race([Promise.all(this.slots.map((s) => this.discard(s))), waited]);
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift(() => true);
      if (!job) return;
      this.start(slot, job);
    }
  }

  private start(slot: Slot<Q, R>, job: Job<Q, R>): void {
    clearTimeout(slot.idle);
    slot.job = job;
    const worker = slot.worker ?? this.spawn(slot);
    // The thread goes first: finishing starts the next job, which must get a fresh thread, not this one.
    const expire = (failure: ThreadFailure, reason: string) => () => {
      void this.discard(slot);
      this.finish(slot, { ok: false, failure, reason });
    };
    slot.timer = setTimeout(expire('unstarted', `${this.opts.doing} could not start in time`), STARTUP_MS);
    void slot.ready!.then(() => {
      if (slot.job !== job || slot.worker !== worker) return;
      clearTimeout(slot.timer);
      slot.timer = setTimeout(expire('timeout', `${this.opts.doing} took longer than ${this.opts.timeoutMs} ms`), this.opts.timeoutMs);
      try {
        worker.postMessage({ id: job.id, request: job.request });
      } catch (e) {
        this.finish(slot, { ok: false, failure: 'failed', reason: `${this.opts.doing} could not be handed over: ${(e as Error).message}` });
      }
    });
  }

  private spawn(slot: Slot<Q, R>): Worker {
    const options = { resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb } };
    const worker = this.opts.plain ? new Worker(new URL(`${this.opts.module}.mjs`, this.opts.base), options) : startTsWorker(this.opts.base, this.opts.module, options);
    worker.unref();
    let markReady!: () => void;
    slot.ready = new Promise<void>((resolve) => (markReady = resolve));
    // Nothing the thread sends or does may throw here: an exception in these handlers would end the process.
    worker.on('message', (msg: { ready?: true; id?: number; ok?: boolean; value?: R; reason?: unknown }) => {
      if (msg?.ready) return markReady();
      if (slot.worker !== worker || !slot.job || msg?.id !== slot.job.id) return;
      this.finish(slot, msg.ok ? { ok: true, value: msg.value as R } : { ok: false, failure: 'failed', reason: String(msg.reason) });
    });
    const onDeath = (why: string) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      // Out of heap included (ERR_WORKER_OUT_OF_MEMORY).
      this.finish(slot, { ok: false, failure: 'crashed', reason: `${this.opts.doing} stopped unexpectedly (${why})` });
    };
    worker.on('error', (e) => onDeath(e.message));
    worker.on('exit', (code) => onDeath(`exit code ${code}`));
    slot.worker = worker;
    return worker;
  }

  private finish(slot: Slot<Q, R>, outcome: ThreadOutcome<R>): void {
    const job = slot.job;
    if (!job) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    job.resolve(outcome);
    this.pump();
    if (!slot.job && slot.worker && this.opts.idleMs !== undefined && !this.closed) {
      slot.idle = setTimeout(() => {
        if (!slot.job) void this.discard(slot);
      }, this.opts.idleMs);
      slot.idle.unref();
    }
  }

  /** Threads alive now (started, not yet let go). */
  get threads(): number {
    return this.slots.filter((s) => s.worker).length;
  }

  /** Resolves when the thread has exited (a retiring one once its current job ends). */
  private discard(slot: Slot<Q, R>): Promise<unknown> {
    const w = slot.worker;
    slot.worker = undefined;
    if (!w) return Promise.resolve();
    if (this.opts.letGo !== 'retire') return w.terminate();
    const exited = new Promise((resolve) => w.once('exit', resolve));
    // Held until it has ended: an unreferenced thread would let a process with nothing else to do exit meanwhile.
    w.ref();
    try {
      w.postMessage('retire');
    } catch {
      return w.terminate();
    }
    return exited;
  }
}
