import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { PacedSchedule, SWEEP_PACE } from '../lib/paced-schedule.js';
import type { RangeKey, RetentionStore } from './task-retention.repository.js';
import type { RemoveReleasedBlobs } from './tasks.repository.js';

const DAY_MS = 86_400_000;

/**
 * Tasks read (a page of the creation-order range) and at most deleted per transaction. On libsql a transaction
 * holds the write lock and, libsql being synchronous, the event loop: 100 typical tasks (five events, two
 * messages each) take ~11 ms (p50), against ~20 ms for 200 and ~55 ms for 500 (docs/operations.md#retention).
 */
export const RETENTION_BATCH = 100;

/** After each batch the sweep waits this many times as long as the batch took (lib/paced-schedule.ts). */
export const RETENTION_PACE = SWEEP_PACE;

export interface TaskRetentionOptions {
  repo: RetentionStore;
  clock: Clock;
  log: Logger;
  /** AGENTRY_TASK_RETENTION_DAYS; 0 turns the sweep off. */
  days: number;
  /** Tasks expired, for /metrics (agentry_tasks_expired_total). */
  onExpired?: (count: number) => void;
  /** Removes the blobs of the uploads that went with a batch, after its commit (src/files/file-disposal.ts). */
  removeBlobs?: RemoveReleasedBlobs;
  /** First sweep after start: 30 s, so that starting (migrations, the worker's first claims) goes first. */
  firstDelayMs?: number;
  /**
   * Between the end of a sweep and the next: 10 minutes. A task outlives its retention by at most about this, and a
   * sweep then has only ten minutes' worth of tasks to delete (one or two batches on most installations); the fixed
   * cost of a sweep is two index seeks per organization.
   */
  intervalMs?: number;
  batch?: number;
  pace?: number;
}

export interface SweepResult {
  deleted: number;
  /** Delete transactions. */
  batches: number;
  /** Wall time of the sweep (pauses included), and of its longest delete transaction. */
  ms: number;
  longestBatchMs: number;
}

/**
 * The task retention sweep of the worker role (docs/decisions.md#tasks-retention): deletes final tasks that
 * finished more than `days` ago with their records, organization by organization, in batches of one transaction
 * each, pausing after each one (RETENTION_PACE) so requests and other writers are served between them. `stop` ends
 * it after the batch in flight. Every worker process runs one; on PostgreSQL one process sweeps at a time (a session
 * advisory lock) and the others skip their turn.
 */
export class TaskRetention {
  private readonly batch: number;
  /** When sweeps run, the pause after each batch, and the stop that ends a sweep after its batch in flight. */
  private readonly schedule: PacedSchedule;

  constructor(private readonly o: TaskRetentionOptions) {
    this.batch = o.batch ?? RETENTION_BATCH;
    this.schedule = new PacedSchedule({
      run: () => this.sweep(),
      onError: (err) => o.log.error({ err }, 'task retention sweep failed; the next one tries again'),
      firstDelayMs: o.firstDelayMs ?? 30_000,
      intervalMs: o.intervalMs ?? 600_000,
      pace: o.pace ?? RETENTION_PACE,
    });
  }

  get enabled(): boolean {
    return this.o.days > 0;
  }

  async start(): Promise<void> {
    if (!this.enabled || !this.schedule.start()) return;
    this.o.log.info({ retention_days: this.o.days }, `task retention on: final tasks are deleted ${this.o.days} days after they finished`);
  }

  stop(): Promise<void> {
    return this.schedule.stop();
  }

  /** One sweep; undefined when retention is off or another process was sweeping (PostgreSQL). */
  async sweep(): Promise<SweepResult | undefined> {
    if (!this.enabled) return undefined;
    const started = performance.now();
    const now = this.o.clock.now();
    const cutoff = now - this.o.days * DAY_MS;
    const r: SweepResult = { deleted: 0, batches: 0, ms: 0, longestBatchMs: 0 };
    const out = await this.o.repo.exclusively(async (repo) => {
      const pages = this.schedule.pages((org) => repo.organizationAfter(org), (org, after: RangeKey | undefined, size) => repo.createdBefore(org, cutoff, after, size), this.batch);
      for await (const { org, page } of pages) {
        const t = performance.now();
        const { deleted: n, released } = await repo.deleteExpired(org, page.map((p) => p.id), cutoff, now);
        const took = performance.now() - t;
        r.longestBatchMs = Math.max(r.longestBatchMs, took);
        r.batches++;
        r.deleted += n;
        if (n > 0) this.o.onExpired?.(n);
        // Outside the pacing: the blob store's time, not the database's (one delete of their records at most).
        if (released.length) await this.o.removeBlobs?.(released);
        await this.schedule.pause(took);
      }
    });
    if (!out.ran) return undefined;
    r.ms = performance.now() - started;
    if (r.deleted > 0) {
      this.o.log.info(
        { tasks_expired: r.deleted, batches: r.batches, duration_ms: Math.round(r.ms), longest_batch_ms: Math.round(r.longestBatchMs), retention_days: this.o.days },
        `task retention: ${r.deleted} tasks deleted`,
      );
    }
    return r;
  }
}
