import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AppError } from '../errors.js';
import { FairQueue } from '../lib/fair-queue.js';
import type { Logger } from '../lib/logger.js';
import type { ExtractFailure, ExtractJob, ExtractOutcome } from './extract-file.js';

/**
 * Runs extraction jobs in a small pool of child processes (the extraction host, extraction.child.ts), each with a
 * wall-clock deadline and a memory ceiling after which the child is SIGKILLed and replaced. Processes rather than
 * worker threads: a worker's resourceLimits bound only the V8 heap, while tesseract's WebAssembly memory and
 * native buffers are not, and a process can be killed from outside whatever it is doing. The ceiling is enforced by
 * polling the child's resident set in /proc (VmRSS); without /proc only the deadline and the V8 heap flag apply.
 *
 * Fair sharing: waiting files are queued per organization and served round-robin (lib/fair-queue.ts), with a cap on
 * each organization's waiting files and, with several processes, on the processes it holds. A file holds a process
 * at most `timeoutMs` once its child is ready (a fresh child has STARTUP_MS to get ready), so while one
 * organization floods the host another's file starts within that time of being queued: ceil(K / processes) such
 * turns with K organizations waiting.
 */

export interface ExtractionPoolOptions {
  /** Child processes; each runs one job at a time. */
  processes: number;
  /** Wall-clock time one file may take once its child is ready (a fresh child first gets STARTUP_MS to load). */
  timeoutMs: number;
  /** Resident memory of a child, in MiB, above which it is killed. */
  memoryMb: number;
  /** Jobs waiting for a free child beyond which new ones are answered 503. */
  queueLimit: number;
  /** Jobs of one organization waiting for a free child beyond which its new ones are answered 503. */
  queuePerOrg: number;
}

export type ExtractResult = ExtractOutcome & { ms: number; peakRssMb?: number };

/** How the file service reaches the host: a job in, an outcome out; never throws for a bad file. */
export interface TextExtraction {
  /** `owner`: the organization the file is read for, the unit of fair sharing. */
  extract(owner: string, job: ExtractJob): Promise<ExtractResult>;
  close(): Promise<void>;
}

const STARTUP_MS = 20_000;
const POLL_MS = 50;
const MB = 1024 * 1024;

interface Pending {
  owner: string;
  job: ExtractJob;
  resolve(r: ExtractResult): void;
}

interface Running {
  id: number;
  pending: Pending;
  started: number;
  peakRss: number;
  timers: NodeJS.Timeout[];
}

interface Slot {
  child?: ChildProcess;
  ready?: Promise<void>;
  running?: Running;
}

/**
 * The child's entry: the sibling .js when running from dist/; from the sources, the .ts with our own type-stripping
 * hooks (lib/ts-hooks.mjs says why not tsx).
 */
function childEntry(): { path: string; execArgv: string[] } {
  const fromSources = import.meta.url.endsWith('.ts');
  const path = fileURLToPath(new URL(fromSources ? './extraction.child.ts' : './extraction.child.js', import.meta.url));
  const loader = fromSources ? ['--import', new URL('../lib/ts-hooks.mjs', import.meta.url).href] : [];
  return { path, execArgv: loader };
}

/** The resident set of a process in bytes; undefined when /proc cannot tell (not Linux, process gone). */
export function residentBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export class ExtractionPool implements TextExtraction {
  private readonly slots: Slot[];
  private readonly queue = new FairQueue<Pending>();
  /** Children one organization may hold at once: one is always left for the others when there are several. */
  private readonly maxPerOwner: number;
  private seq = 0;
  private closed = false;

  constructor(
    private readonly opts: ExtractionPoolOptions,
    private readonly log: Logger,
  ) {
    this.slots = Array.from({ length: opts.processes }, () => ({}));
    this.maxPerOwner = Math.max(1, opts.processes - 1);
  }

  extract(owner: string, job: ExtractJob): Promise<ExtractResult> {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'The service is stopping', { retryAfter: 5 }));
    const startsNow = this.slots.some((s) => !s.running) && this.held(owner) < this.maxPerOwner;
    if (!startsNow && (this.queue.size >= this.opts.queueLimit || this.queue.sizeOf(owner) >= this.opts.queuePerOrg)) {
      return Promise.reject(new AppError('unavailable', 'Too many files are being read right now; retry shortly', { retryAfter: 5 }));
    }
    return new Promise((resolve) => {
      this.queue.push(owner, { owner, job, resolve });
      this.pump();
    });
  }

  private held(owner: string): number {
    return this.slots.filter((s) => s.running?.pending.owner === owner).length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.drain()) p.resolve({ ok: false, failure: 'unavailable', reason: 'the service is stopping', ms: 0 });
    for (const slot of this.slots) this.kill(slot, 'the service is stopping', 'unavailable');
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.running) continue;
      const next = this.queue.shift((owner) => this.held(owner) < this.maxPerOwner);
      if (!next) return;
      this.run(slot, next);
    }
  }

  private run(slot: Slot, pending: Pending): void {
    const fresh = !slot.child;
    const child = slot.child ?? this.spawn(slot);
    const running: Running = { id: ++this.seq, pending, started: Date.now(), peakRss: 0, timers: [] };
    slot.running = running;
    // A fresh child gets its start-up allowance before the file's own deadline begins, not added to it: every
    // file after a kill starts on a fresh child, and an allowance added to the deadline would be handed to exactly
    // the files that get children killed. A child that does not start says nothing about the file: 503.
    const startup = fresh ? setTimeout(() => this.kill(slot, 'the extraction host did not start in time', 'unavailable'), STARTUP_MS) : undefined;
    if (startup) running.timers.push(startup);
    const ceiling = this.opts.memoryMb * MB;
    const poll = setInterval(() => {
      const rss = child.pid === undefined ? undefined : residentBytes(child.pid);
      if (rss === undefined) return clearInterval(poll);
      running.peakRss = Math.max(running.peakRss, rss);
      if (rss > ceiling) this.kill(slot, `needed more than ${this.opts.memoryMb} MB of memory to read`, 'too_large');
    }, POLL_MS);
    running.timers.push(poll);
    void slot.ready!.then(() => {
      if (slot.running !== running) return;
      clearTimeout(startup);
      running.timers.push(setTimeout(() => this.kill(slot, `took longer than ${this.opts.timeoutMs / 1000} s to read`, 'too_large'), this.opts.timeoutMs));
      child.send({ id: running.id, job: pending.job });
    });
  }

  private spawn(slot: Slot): ChildProcess {
    const { path, execArgv } = childEntry();
    const child = fork(path, [], {
      // No environment: the host needs no configuration and must never hold the service's credentials.
      env: {},
      execArgv: [...execArgv, `--max-old-space-size=${this.opts.memoryMb}`],
      serialization: 'advanced',
      // stderr is kept (its tail) for the log line of a crash, not passed through: readers print stack traces.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-2000)));
    slot.child = child;
    slot.ready = new Promise<void>((resolve) => {
      child.on('message', (msg: { ready?: boolean; id?: number; outcome?: ExtractOutcome }) => {
        if (msg.ready) return resolve();
        if (slot.child === child && slot.running && msg.id === slot.running.id && msg.outcome) this.finish(slot, msg.outcome);
      });
    });
    child.on('error', (e) => this.log.warn({ err: e }, 'extraction host error'));
    child.on('exit', (code, signal) => {
      if (slot.child !== child) return;
      slot.child = undefined;
      // A reader that crashed the host (a native abort, an exception outside any promise, V8 out of heap).
      const outOfHeap = signal === 'SIGABRT' || code === 134;
      if (slot.running) {
        this.log.warn({ code, signal, file_kind: slot.running.pending.job.kind, stderr_tail: stderr.slice(-500) }, 'extraction host exited while reading a file');
        this.finish(
          slot,
          outOfHeap
            ? { ok: false, failure: 'too_large', reason: `needed more than ${this.opts.memoryMb} MB of memory to read` }
            : { ok: false, failure: 'unreadable', reason: 'the reader stopped on it' },
        );
      }
    });
    return child;
  }

  /** SIGKILL always works, whatever the child is doing; the job fails with `reason`, the next job gets a new child. */
  private kill(slot: Slot, reason: string, failure: ExtractFailure = 'unreadable'): void {
    const child = slot.child;
    slot.child = undefined;
    child?.kill('SIGKILL');
    if (slot.running) {
      this.log.warn({ file_kind: slot.running.pending.job.kind, reason }, 'extraction host killed');
      this.finish(slot, { ok: false, failure, reason });
    }
  }

  private finish(slot: Slot, outcome: ExtractOutcome): void {
    const running = slot.running!;
    slot.running = undefined;
    for (const t of running.timers) clearTimeout(t);
    const rss = slot.child?.pid === undefined ? undefined : residentBytes(slot.child.pid);
    running.peakRss = Math.max(running.peakRss, rss ?? 0);
    const peakRssMb = running.peakRss ? Math.round(running.peakRss / MB) : undefined;
    // WebAssembly memory never shrinks: a child left above half its ceiling is replaced so the next file starts
    // with full headroom and an idle service does not keep a gigabyte resident.
    if (slot.child && rss !== undefined && rss > (this.opts.memoryMb * MB) / 2) {
      const child = slot.child;
      slot.child = undefined;
      child.kill('SIGKILL');
    }
    running.pending.resolve({ ...outcome, ms: Date.now() - running.started, peakRssMb });
    this.pump();
  }
}
