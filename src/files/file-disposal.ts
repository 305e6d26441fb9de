import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { BlobStoreTimeout } from './blob-store-errors.js';
import type { BlobStore } from './blob-store.types.js';
import type { FileLifetimeRepository, ReleasedBlob } from './file-lifetime.repository.js';

/** Blob deletions in flight at once: a task's uploads on S3 go in parallel, not one round trip after another. */
const PARALLEL_DELETES = 8;

export interface FileDisposalOptions {
  repo: Pick<FileLifetimeRepository, 'release' | 'forget'>;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
  /** Blob deletions that failed (and stay recorded for the file sweep), for /metrics. */
  onFailed?: (count: number) => void;
}

/**
 * How stored files go (docs/decisions.md, "Files: lifetime"): their rows are deleted in a transaction that records
 * their blobs in `file_blob_deletions` (with their task's records, deleteTaskRecords; with their knowledge documents,
 * KnowledgeService; or on their own, `discard`); after the commit `removeBlobs` deletes the blobs, then those records. Removing is best effort and never throws: a
 * blob the store would not delete keeps its record, and the worker role's file sweep (file-sweep.ts) tries again.
 */
export class FileDisposal {
  constructor(private readonly o: FileDisposalOptions) {}

  /** Removes the organization's files `ids` (rows, extracted text, blobs): those of a refused submission or document. */
  async discard(organizationId: string, ids: string[]): Promise<void> {
    await this.removeBlobs(await this.o.repo.release(organizationId, ids, this.o.clock.now()));
  }

  /**
   * Deletes released blobs from the store, then their records; how many were removed and how many failed. Once a
   * deletion times out (a stalled store) no further one starts: those not tried stay recorded and count as failed, so
   * a task's delete or a sweep page waits about one store deadline, not one per 8 blobs.
   */
  async removeBlobs(released: readonly ReleasedBlob[]): Promise<{ removed: number; failed: number }> {
    if (released.length === 0) return { removed: 0, failed: 0 };
    const removed: string[] = [];
    let firstError: unknown;
    let stalled = false;
    let next = 0;
    const deleting = async () => {
      while (!stalled && next < released.length) {
        const b = released[next++]!;
        try {
          await this.o.blobs.delete(b.blobKey);
          removed.push(b.blobKey);
        } catch (err) {
          firstError ??= err;
          if (err instanceof BlobStoreTimeout) stalled = true;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_DELETES, released.length) }, deleting));
    const failed = released.length - removed.length;
    try {
      await this.o.repo.forget(removed);
    } catch (err) {
      // The blobs are gone; their records stay and the sweep deletes them again (a missing blob is no error).
      this.o.log.warn({ err }, 'file blobs removed, but their deletion records could not be cleared; the file sweep will');
    }
    if (failed > 0) {
      this.o.log.warn({ err: firstError, blobs_failed: failed }, `${failed} file blobs could not be removed; the file sweep tries again`);
      this.o.onFailed?.(failed);
    }
    return { removed: removed.length, failed };
  }
}
