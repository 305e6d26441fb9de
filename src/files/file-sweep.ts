import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { PacedSchedule, SWEEP_PACE } from '../lib/paced-schedule.js';
import type { FileDisposal } from './file-disposal.js';
import type { FileLifetimeRepository, UploadHolder } from './file-lifetime.repository.js';

/**
 * How old an upload must be before a missing task (or knowledge document) makes it an orphan. Files are stored before
 * their task is submitted (their documents committed), which happens within seconds (or is refused and the files
 * discarded), so an hour leaves room for any submission still in flight, and for clocks of several processes that
 * disagree by minutes.
 */
export const ORPHAN_GRACE_MS = 3_600_000;

/** Uploads read (a page of one organization's creation-order range) and blob deletions retried, per batch. */
export const FILE_SWEEP_BATCH = 100;

export interface FileSweepOptions {
  repo: FileLifetimeRepository;
  disposal: Pick<FileDisposal, 'removeBlobs'>;
  /** Moves the task inbox into `tasks` (src/tasks/task-inbox.ts): the task of an upload may still wait there. */
  settleTasks: () => Promise<unknown>;
  clock: Clock;
  log: Logger;
  /** Orphan uploads deleted, for /metrics (agentry_files_orphaned_total). */
  onOrphans?: (count: number) => void;
  graceMs?: number;
  /** First sweep after start: a minute, after the task retention sweep's first (30 s). */
  firstDelayMs?: number;
  /** Between the end of a sweep and the next: 10 minutes. */
  intervalMs?: number;
  batch?: number;
  pace?: number;
}

export interface FileSweepResult {
  /** Uploads deleted because no task or document holds them. */
  orphans: number;
  /** Blobs removed, and blob deletions that failed again (they stay recorded). */
  blobsRemoved: number;
  blobsFailed: number;
  /** Wall time, pauses included. */
  ms: number;
}

/**
 * The file sweep of the worker role (docs/decisions.md, "Files: lifetime"), every 10 minutes:
 *
 * 1. Blob deletions that failed (their file rows are gone; `file_blob_deletions` remembers them) are tried again,
 *    a page at a time, until a page removes nothing (the store is down: the next sweep tries again).
 * 2. Orphan uploads are deleted: a file stored for a task (`task_id`) or a knowledge document (`document_id`) more
 *    than ORPHAN_GRACE_MS ago whose task or document does not exist. That is a request whose process died between
 *    storing its files and committing its task or documents, or whose refusal could not discard them. Each sweep reads the uploads created since the previous one's range ended
 *    (the first sweep of a process reads them all, paced), so a steady sweep reads ten minutes' worth of uploads.
 *
 * One process sweeps at a time on PostgreSQL (a session advisory lock); `stop` ends a sweep after its batch in flight.
 */
export class FileSweep {
  /** Uploads created before this were checked by an earlier sweep of this process (0: none yet). */
  private checkedUpTo = 0;
  private readonly batch: number;
  private readonly schedule: PacedSchedule;

  constructor(private readonly o: FileSweepOptions) {
    this.batch = o.batch ?? FILE_SWEEP_BATCH;
    this.schedule = new PacedSchedule({
      run: () => this.sweep(),
      onError: (err) => o.log.error({ err }, 'file sweep failed; the next one tries again'),
      firstDelayMs: o.firstDelayMs ?? 60_000,
      intervalMs: o.intervalMs ?? 600_000,
      pace: o.pace ?? SWEEP_PACE,
    });
  }

  async start(): Promise<void> {
    this.schedule.start();
  }

  stop(): Promise<void> {
    return this.schedule.stop();
  }

  /** One sweep; undefined when another process was sweeping (PostgreSQL). */
  async sweep(): Promise<FileSweepResult | undefined> {
    const started = performance.now();
    const now = this.o.clock.now();
    const cutoff = now - (this.o.graceMs ?? ORPHAN_GRACE_MS);
    const r: FileSweepResult = { orphans: 0, blobsRemoved: 0, blobsFailed: 0, ms: 0 };
    const out = await this.o.repo.exclusively(async (repo) => {
      await this.retryBlobDeletions(repo, r);
      await this.releaseOrphans(repo, this.checkedUpTo, cutoff, now, r);
    });
    if (!out.ran) return undefined;
    // A sweep cut short by a stop checks its range again next time.
    if (!this.schedule.halted) this.checkedUpTo = Math.max(this.checkedUpTo, cutoff);
    r.ms = performance.now() - started;
    if (r.orphans > 0 || r.blobsRemoved > 0 || r.blobsFailed > 0) {
      this.o.log.info(
        { files_orphaned: r.orphans, blobs_removed: r.blobsRemoved, blobs_failed: r.blobsFailed, duration_ms: Math.round(r.ms) },
        `file sweep: ${r.orphans} orphan uploads deleted, ${r.blobsRemoved} blobs removed, ${r.blobsFailed} blob deletions still failing`,
      );
    }
    return r;
  }

  private async retryBlobDeletions(repo: FileLifetimeRepository, r: FileSweepResult): Promise<void> {
    for (let after: string | undefined; !this.schedule.halted; ) {
      const page = await repo.pending(after, this.batch);
      if (page.length === 0) break;
      const done = await this.o.disposal.removeBlobs(page);
      r.blobsRemoved += done.removed;
      r.blobsFailed += done.failed;
      // Nothing removed: the store refuses (down, or its credentials changed); the rest waits for the next sweep.
      if (done.removed === 0 || page.length < this.batch) break;
      after = page[page.length - 1]!.blobKey;
    }
  }

  private async releaseOrphans(repo: FileLifetimeRepository, from: number, cutoff: number, now: number, r: FileSweepResult): Promise<void> {
    let settled = false;
    const pages = this.schedule.pages((org) => repo.organizationAfter(org), (org, after: UploadHolder | undefined, size) => repo.uploads(org, from, cutoff, after, size), this.batch);
    for await (const { org, page } of pages) {
      const orphans = page.filter((u) => !u.held).map((u) => u.id);
      if (orphans.length === 0) continue;
      // Its task may wait in the task inbox (an asynchronous webhook call): moved, it exists and holds the file.
      if (!settled) await this.o.settleTasks();
      settled = true;
      const t = performance.now();
      const released = await repo.releaseOrphans(org, orphans, cutoff, now);
      const took = performance.now() - t;
      r.orphans += released.length;
      if (released.length > 0) this.o.onOrphans?.(released.length);
      const done = await this.o.disposal.removeBlobs(released);
      r.blobsRemoved += done.removed;
      r.blobsFailed += done.failed;
      await this.schedule.pause(took);
    }
  }
}
