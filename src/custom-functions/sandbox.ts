import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { FairQueue } from '../lib/fair-queue.js';

/**
 * A small pool of worker threads, each running QuickJS (sandbox.worker.mjs). Custom-function code never runs on the
 * main event loop: a function that spins until its deadline delays only its own job, and HTTP requests and other
 * tasks keep being served meanwhile.
 *
 * Fair sharing: waiting jobs are queued per organization and threads are handed out round-robin between
 * organizations (lib/fair-queue.ts), with a cap on each organization's waiting jobs and, when there is more than one
 * thread, on the threads it holds. A job holds a thread at most `timeoutMs + HARD_KILL_GRACE_MS`, so with one
 * organization flooding the pool another's call starts within that time of being queued (7 s by default).
 */

export interface SandboxLimits {
  /** Wall-clock budget of one job; the interpreter is interrupted when it passes. */
  timeoutMs: number;
  /** Allocation budget of one job. */
  memoryBytes: number;
}

export type SandboxFailureKind = 'syntax' | 'invalid' | 'runtime' | 'timeout' | 'memory' | 'limit' | 'busy' | 'cancelled' | 'internal';

export type SandboxOutcome =
  | { ok: true; result: unknown; logs: string[] }
  | { ok: false; kind: SandboxFailureKind; error: string; logs: string[] };

export interface SandboxOptions {
  /** Worker threads (default: half the CPUs, 1..4). */
  size?: number;
  limits?: Partial<SandboxLimits>;
  /** Jobs waiting for a thread before new ones are refused (default 1000). */
  maxQueue?: number;
  /** Jobs of one organization waiting for a thread before its new ones are refused (default 50). */
  maxQueuePerOrg?: number;
  /** Threads one organization may hold at once (default: all but one when there are several, else 1). */
  maxThreadsPerOrg?: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { timeoutMs: 5_000, memoryBytes: 64 * 1024 * 1024 };

/** How long past its deadline a job may run before its whole thread is terminated (the interrupt did not fire). */
export const HARD_KILL_GRACE_MS = 2_000;
const WORKER_URL = new URL('./sandbox.worker.mjs', import.meta.url);

interface Job {
  id: number;
  orgId: string;
  op: 'analyse' | 'run';
  code: string;
  argsJson: string;
  signal?: AbortSignal;
  resolve(outcome: SandboxOutcome): void;
}

const CANCELLED: SandboxOutcome = { ok: false, kind: 'cancelled', error: 'The call was cancelled', logs: [] };

interface WorkerReply {
  id: number;
  ok: boolean;
  kind?: SandboxFailureKind;
  error?: string;
  resultJson?: string;
  logs: string[];
}

class Slot {
  private worker?: Worker;
  job?: Job;
  private killTimer?: NodeJS.Timeout;

  constructor(
    private readonly limits: SandboxLimits,
    private readonly onIdle: () => void,
  ) {}

  start(job: Job): void {
    this.job = job;
    const worker = this.ensureWorker();
    // A cancelled call (task stopped) frees its thread at once: the interpreter cannot be interrupted from here.
    job.signal?.addEventListener(
      'abort',
      () => {
        if (this.job !== job) return;
        this.discardWorker();
        this.finish(CANCELLED);
      },
      { once: true },
    );
    this.killTimer = setTimeout(() => {
      // The interpreter did not stop at its deadline (a long native call): drop the whole thread.
      this.discardWorker();
      this.finish({ ok: false, kind: 'timeout', error: 'The function ran past its time limit and was stopped', logs: [] });
    }, this.limits.timeoutMs + HARD_KILL_GRACE_MS);
    this.killTimer.unref();
    try {
      worker.postMessage({ id: job.id, op: job.op, code: job.code, argsJson: job.argsJson, ...this.limits });
    } catch (e) {
      this.discardWorker();
      this.finish({ ok: false, kind: 'internal', error: `The sandbox could not take the call (${(e as Error).message})`, logs: [] });
    }
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_URL, {
      // The QuickJS heap lives in WebAssembly memory (bounded by the job limits); this bounds the JS glue around it.
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 },
    });
    worker.unref();
    // Nothing a worker sends may throw here: an exception in this handler would end the whole process.
    worker.on('message', (reply: WorkerReply) => {
      if (!this.job || reply?.id !== this.job.id) return;
      this.finish(toOutcome(reply));
    });
    const onDeath = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.finish({ ok: false, kind: 'internal', error: `The sandbox stopped unexpectedly (${why})`, logs: [] });
    };
    worker.on('error', (e) => onDeath(e.message));
    worker.on('exit', (code) => onDeath(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  private finish(outcome: SandboxOutcome): void {
    const job = this.job;
    if (!job) return;
    clearTimeout(this.killTimer);
    this.job = undefined;
    job.resolve(outcome);
    this.onIdle();
  }

  /** Called before `finish`: finishing starts the next job, which must get a fresh thread, not this one. */
  private discardWorker(): void {
    const w = this.worker;
    this.worker = undefined;
    void w?.terminate();
  }

  async close(): Promise<void> {
    this.finish({ ok: false, kind: 'internal', error: 'The sandbox is shutting down', logs: [] });
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}

const FAILURE_KINDS = new Set<string>(['syntax', 'invalid', 'runtime', 'timeout', 'memory', 'limit', 'busy', 'cancelled', 'internal']);

/** The worker's reply as an outcome; whatever it holds ends as an outcome of this call, never as an exception. */
function toOutcome(reply: WorkerReply): SandboxOutcome {
  const logs = Array.isArray(reply.logs) ? reply.logs.filter((l): l is string => typeof l === 'string') : [];
  if (!reply.ok) {
    const kind = typeof reply.kind === 'string' && FAILURE_KINDS.has(reply.kind) ? reply.kind : 'internal';
    return { ok: false, kind, error: typeof reply.error === 'string' ? reply.error : 'Unknown error', logs };
  }
  if (reply.resultJson === undefined) return { ok: true, result: null, logs };
  try {
    if (typeof reply.resultJson !== 'string') throw new TypeError('not text');
    return { ok: true, result: JSON.parse(reply.resultJson), logs };
  } catch {
    return { ok: false, kind: 'invalid', error: 'The function returned a result that is not valid JSON', logs };
  }
}

export class SandboxPool {
  readonly limits: SandboxLimits;
  private readonly slots: Slot[];
  private readonly queue = new FairQueue<Job>();
  private readonly maxQueue: number;
  private readonly maxQueuePerOrg: number;
  private readonly maxThreadsPerOrg: number;
  private nextId = 1;
  private closed = false;

  constructor(opts: SandboxOptions = {}) {
    this.limits = { ...DEFAULT_SANDBOX_LIMITS, ...opts.limits };
    const size = opts.size ?? Math.min(4, Math.max(1, Math.floor(availableParallelism() / 2)));
    this.maxQueue = opts.maxQueue ?? 1000;
    this.maxQueuePerOrg = opts.maxQueuePerOrg ?? 50;
    // One thread always stays for the other organizations when there are several.
    this.maxThreadsPerOrg = Math.max(1, opts.maxThreadsPerOrg ?? (size > 1 ? size - 1 : 1));
    this.slots = Array.from({ length: size }, () => new Slot(this.limits, () => this.pump()));
  }

  /** Compiles and loads the code; succeeds when it defines a function `run`. */
  analyse(orgId: string, code: string): Promise<SandboxOutcome> {
    return this.submit(orgId, 'analyse', code, '{}');
  }

  /** Loads the code and awaits `run(args)`; the result is whatever JSON `run` resolved to. */
  run(orgId: string, code: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<SandboxOutcome> {
    let argsJson: string;
    try {
      argsJson = JSON.stringify(args) ?? '{}';
    } catch (e) {
      return Promise.resolve({ ok: false, kind: 'invalid', error: `The arguments cannot be serialised: ${(e as Error).message}`, logs: [] });
    }
    return this.submit(orgId, 'run', code, argsJson, signal);
  }

  private submit(orgId: string, op: Job['op'], code: string, argsJson: string, signal?: AbortSignal): Promise<SandboxOutcome> {
    if (signal?.aborted) return Promise.resolve(CANCELLED);
    if (this.closed) return Promise.resolve({ ok: false, kind: 'internal', error: 'The sandbox is shutting down', logs: [] });
    if (this.queue.size >= this.maxQueue || this.queue.sizeOf(orgId) >= this.maxQueuePerOrg) {
      return Promise.resolve({ ok: false, kind: 'busy', error: 'The function sandbox is busy; try again shortly', logs: [] });
    }
    return new Promise((resolve) => {
      const job: Job = { id: this.nextId++, orgId, op, code, argsJson, signal, resolve };
      this.queue.push(orgId, job);
      signal?.addEventListener(
        'abort',
        () => {
          if (this.queue.remove(orgId, job)) resolve(CANCELLED);
        },
        { once: true },
      );
      this.pump();
    });
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (!this.queue.size) return;
      if (slot.job) continue;
      const job = this.queue.shift((org) => this.threadsHeldBy(org) < this.maxThreadsPerOrg);
      if (!job) return;
      slot.start(job);
    }
  }

  private threadsHeldBy(orgId: string): number {
    let n = 0;
    for (const slot of this.slots) if (slot.job?.orgId === orgId) n++;
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.resolve({ ok: false, kind: 'internal', error: 'The sandbox is shutting down', logs: [] });
    await Promise.all(this.slots.map((s) => s.close()));
  }
}
