import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * A small pool of worker threads, each running QuickJS (sandbox.worker.mjs). Custom-function code never runs on the
 * main event loop: a function that spins until its deadline delays only its own job, and HTTP requests and other
 * tasks keep being served meanwhile.
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
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { timeoutMs: 5_000, memoryBytes: 64 * 1024 * 1024 };

/** How long past its deadline a job may run before its whole thread is terminated (the interrupt did not fire). */
const HARD_KILL_GRACE_MS = 2_000;
const WORKER_URL = new URL('./sandbox.worker.mjs', import.meta.url);

interface Job {
  id: number;
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
        this.finish(CANCELLED);
        this.discardWorker();
      },
      { once: true },
    );
    this.killTimer = setTimeout(() => {
      // The interpreter did not stop at its deadline (a long native call): drop the whole thread.
      this.finish({ ok: false, kind: 'timeout', error: 'The function ran past its time limit and was stopped', logs: [] });
      this.discardWorker();
    }, this.limits.timeoutMs + HARD_KILL_GRACE_MS);
    this.killTimer.unref();
    worker.postMessage({ id: job.id, op: job.op, code: job.code, argsJson: job.argsJson, ...this.limits });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_URL, {
      // The QuickJS heap lives in WebAssembly memory (bounded by the job limits); this bounds the JS glue around it.
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 },
    });
    worker.unref();
    worker.on('message', (reply: WorkerReply) => {
      if (!this.job || reply.id !== this.job.id) return;
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

function toOutcome(reply: WorkerReply): SandboxOutcome {
  if (!reply.ok) return { ok: false, kind: reply.kind ?? 'internal', error: reply.error ?? 'Unknown error', logs: reply.logs ?? [] };
  return { ok: true, result: reply.resultJson === undefined ? null : JSON.parse(reply.resultJson), logs: reply.logs ?? [] };
}

export class SandboxPool {
  readonly limits: SandboxLimits;
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private readonly maxQueue: number;
  private nextId = 1;
  private closed = false;

  constructor(opts: SandboxOptions = {}) {
    this.limits = { ...DEFAULT_SANDBOX_LIMITS, ...opts.limits };
    const size = opts.size ?? Math.min(4, Math.max(1, Math.floor(availableParallelism() / 2)));
    this.maxQueue = opts.maxQueue ?? 1000;
    this.slots = Array.from({ length: size }, () => new Slot(this.limits, () => this.pump()));
  }

  /** Compiles and loads the code; succeeds when it defines a function `run`. */
  analyse(code: string): Promise<SandboxOutcome> {
    return this.submit('analyse', code, '{}');
  }

  /** Loads the code and awaits `run(args)`; the result is whatever JSON `run` resolved to. */
  run(code: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<SandboxOutcome> {
    return this.submit('run', code, JSON.stringify(args), signal);
  }

  private submit(op: Job['op'], code: string, argsJson: string, signal?: AbortSignal): Promise<SandboxOutcome> {
    if (signal?.aborted) return Promise.resolve(CANCELLED);
    if (this.closed) return Promise.resolve({ ok: false, kind: 'internal', error: 'The sandbox is shutting down', logs: [] });
    if (this.queue.length >= this.maxQueue) {
      return Promise.resolve({ ok: false, kind: 'busy', error: 'The function sandbox is busy; try again shortly', logs: [] });
    }
    return new Promise((resolve) => {
      const job: Job = { id: this.nextId++, op, code, argsJson, signal, resolve };
      this.queue.push(job);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.queue.indexOf(job);
          if (i >= 0) {
            this.queue.splice(i, 1);
            resolve(CANCELLED);
          }
        },
        { once: true },
      );
      this.pump();
    });
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (!this.queue.length) return;
      if (!slot.job) slot.start(this.queue.shift()!);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve({ ok: false, kind: 'internal', error: 'The sandbox is shutting down', logs: [] });
    await Promise.all(this.slots.map((s) => s.close()));
  }
}
