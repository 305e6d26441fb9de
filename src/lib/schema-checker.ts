import type { Worker } from 'node:worker_threads';
import type { ErrorObject } from 'ajv';
import { FairQueue } from './fair-queue.js';
import { schemaSizeProblem } from './schema-limits.js';
import { startTsWorker } from './ts-worker.js';

/**
 * Tenant JSON Schemas are compiled and run on worker threads (schema-check.worker.ts), never on the main thread:
 * compiling a schema of ~2,000 nodes took 200-900 ms here, which a caller could repeat with every new schema. Each
 * job has a deadline after which its thread is terminated and replaced, and a heap ceiling; jobs wait in a queue per
 * organization served in turn (fair-queue.ts), so one organization's schemas delay another's by at most one job's
 * deadline per thread. Size and depth are checked first, on the main thread, by an iterative walk (schema-limits.ts).
 */

/** How a caller's schemas are read (see FLAVOURS in the worker). */
export type SchemaFlavour = 'arguments' | 'payload' | 'hint';

export type SchemaCheckRequest = { id: number; flavour: SchemaFlavour; schemaText: string; value?: unknown };
export type SchemaCheckReply =
  | { id: number; kind: 'valid'; value?: unknown }
  | { id: number; kind: 'invalid'; errors: ErrorObject[]; value: unknown }
  | { id: number; kind: 'unusable'; reason: string };

/**
 * `valid` / `invalid`: the value against the schema (`value` is the value as validated: the payload flavour coerces
 * scalars). `unusable`: the schema could not be used (does not compile, too large, too slow, the thread failed).
 */
export type SchemaVerdict =
  | { kind: 'valid'; value: unknown }
  | { kind: 'invalid'; errors: ErrorObject[]; value: unknown }
  | { kind: 'unusable'; reason: string };

export interface SchemaCheckerOptions {
  threads: number;
  /** Wall-clock time of one job (compile and validate) before its thread is terminated. */
  timeoutMs: number;
  /** V8 heap of a thread. */
  heapMb: number;
  /** Jobs one organization may have waiting; beyond, its new ones are `unusable` at once. */
  queuePerOrg: number;
}

export const DEFAULT_SCHEMA_CHECKER: SchemaCheckerOptions = { threads: 1, timeoutMs: 5_000, heapMb: 256, queuePerOrg: 200 };

/** A fresh thread's time to load Ajv and RE2 (seconds from the sources on a busy machine), before any job's deadline. */
const STARTUP_MS = 20_000;

interface Job {
  owner: string;
  request: SchemaCheckRequest;
  resolve(v: SchemaVerdict): void;
}

class Slot {
  worker?: Worker;
  ready?: Promise<void>;
  job?: Job;
  timer?: NodeJS.Timeout;
}

export class SchemaChecker {
  private readonly opts: SchemaCheckerOptions;
  private readonly slots: Slot[];
  private readonly queue = new FairQueue<Job>();
  private nextId = 1;
  private closed = false;

  constructor(opts: Partial<SchemaCheckerOptions> = {}) {
    this.opts = { ...DEFAULT_SCHEMA_CHECKER, ...opts };
    this.slots = Array.from({ length: Math.max(1, this.opts.threads) }, () => new Slot());
  }

  /** Whether `schema` compiles in this flavour (`valid`) or why not (`unusable`). */
  compiles(owner: string, flavour: SchemaFlavour, schema: unknown): Promise<SchemaVerdict> {
    return this.submit(owner, flavour, schema, false);
  }

  /** `value` against `schema`. Never throws: a schema that cannot be used is an `unusable` verdict. */
  validate(owner: string, flavour: SchemaFlavour, schema: unknown, value: unknown): Promise<SchemaVerdict> {
    return this.submit(owner, flavour, schema, true, value);
  }

  private submit(owner: string, flavour: SchemaFlavour, schema: unknown, withValue: boolean, value?: unknown): Promise<SchemaVerdict> {
    const tooLarge = schemaSizeProblem(schema);
    if (tooLarge) return Promise.resolve({ kind: 'unusable', reason: tooLarge });
    if (this.closed) return Promise.resolve({ kind: 'unusable', reason: 'the service is stopping' });
    if (this.queue.sizeOf(owner) >= this.opts.queuePerOrg) {
      return Promise.resolve({ kind: 'unusable', reason: 'too many schemas are being checked for this organization; retry shortly' });
    }
    let schemaText: string;
    try {
      schemaText = JSON.stringify(schema);
    } catch (e) {
      return Promise.resolve({ kind: 'unusable', reason: `the schema is not JSON: ${(e as Error).message}` });
    }
    const request: SchemaCheckRequest = withValue ? { id: this.nextId++, flavour, schemaText, value } : { id: this.nextId++, flavour, schemaText };
    return new Promise((resolve) => {
      this.queue.push(owner, { owner, request, resolve });
      this.pump();
    });
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift(() => true);
      if (!job) return;
      this.start(slot, job);
    }
  }

  private start(slot: Slot, job: Job): void {
    slot.job = job;
    const worker = slot.worker ?? this.spawn(slot);
    // The thread goes first: finishing starts the next job, which must get a fresh thread, not this one.
    const expire = (reason: string) => () => {
      this.discard(slot);
      this.finish(slot, { kind: 'unusable', reason });
    };
    slot.timer = setTimeout(expire('the schema checker did not start in time'), STARTUP_MS);
    void slot.ready!.then(() => {
      if (slot.job !== job || slot.worker !== worker) return;
      clearTimeout(slot.timer);
      slot.timer = setTimeout(expire(`checking the schema took longer than ${this.opts.timeoutMs} ms`), this.opts.timeoutMs);
      try {
        worker.postMessage(job.request);
      } catch (e) {
        // A value that cannot be cloned (it came from JSON, so it should not happen).
        this.finish(slot, { kind: 'unusable', reason: `the value could not be checked: ${(e as Error).message}` });
      }
    });
  }

  private spawn(slot: Slot): Worker {
    const worker = startTsWorker(import.meta.url, './schema-check.worker', { resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb } });
    worker.unref();
    let markReady!: () => void;
    slot.ready = new Promise<void>((resolve) => (markReady = resolve));
    // Nothing the thread sends or does may throw here: an exception in these handlers would end the process.
    worker.on('message', (reply: SchemaCheckReply | { ready: true }) => {
      if ('ready' in reply) return markReady();
      if (slot.worker !== worker || !slot.job || reply?.id !== slot.job.request.id) return;
      if (reply.kind === 'unusable') this.finish(slot, { kind: 'unusable', reason: String(reply.reason) });
      else if (reply.kind === 'invalid') this.finish(slot, { kind: 'invalid', errors: Array.isArray(reply.errors) ? reply.errors : [], value: reply.value });
      else this.finish(slot, { kind: 'valid', value: 'value' in reply ? reply.value : slot.job.request.value });
    });
    const onDeath = (why: string) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      this.finish(slot, { kind: 'unusable', reason: `the schema checker stopped (${why})` });
    };
    worker.on('error', (e) => onDeath(e.message));
    worker.on('exit', (code) => onDeath(`exit code ${code}`));
    slot.worker = worker;
    return worker;
  }

  private finish(slot: Slot, verdict: SchemaVerdict): void {
    const job = slot.job;
    if (!job) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    job.resolve(verdict);
    this.pump();
  }

  private discard(slot: Slot): void {
    const w = slot.worker;
    slot.worker = undefined;
    void w?.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.resolve({ kind: 'unusable', reason: 'the service is stopping' });
    for (const slot of this.slots) this.finish(slot, { kind: 'unusable', reason: 'the service is stopping' });
    await Promise.all(this.slots.map((s) => s.worker?.terminate()));
  }
}
