import { unzipSync } from 'fflate';

/** Limits on everything a ZIP (or an Office document, which is one) may unpack to. */
export interface ArchiveLimits {
  /** Entries across all nesting levels. */
  maxEntries: number;
  /** Uncompressed bytes across all nesting levels. */
  maxTotalBytes: number;
  /** Archives inside archives: 1 allows a ZIP that contains plain files only. */
  maxDepth: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxEntries: 1000, maxTotalBytes: 200 * 1024 * 1024, maxDepth: 3 };

export class ArchiveLimitError extends Error {
  constructor(readonly reason: 'entries' | 'size' | 'depth') {
    super(`archive exceeds the ${reason} limit`);
  }
}

export interface ArchiveSpent {
  entries: number;
  bytes: number;
}

/** Spends one budget across an archive and everything nested in it. */
export class ArchiveBudget {
  private entries: number;
  private bytes: number;

  /** `spent` carries a request's budget across files extracted one at a time (in the extraction host). */
  constructor(
    readonly limits: ArchiveLimits,
    spent: ArchiveSpent = { entries: 0, bytes: 0 },
  ) {
    this.entries = spent.entries;
    this.bytes = spent.bytes;
  }

  get spent(): ArchiveSpent {
    return { entries: this.entries, bytes: this.bytes };
  }

  /** Charges the entries of one archive (by their declared sizes) before any of them is inflated. */
  charge(entryCount: number, declaredBytes: number): void {
    this.entries += entryCount;
    this.bytes += declaredBytes;
    if (this.entries > this.limits.maxEntries) throw new ArchiveLimitError('entries');
    if (this.bytes > this.limits.maxTotalBytes) throw new ArchiveLimitError('size');
  }

  checkDepth(depth: number): void {
    if (depth > this.limits.maxDepth) throw new ArchiveLimitError('depth');
  }
}

export interface ArchiveEntry {
  name: string;
  bytes: Uint8Array;
}

/**
 * Lists an archive from its central directory, charges the budget, then inflates. fflate inflates each entry into
 * a buffer of its declared size and never grows it, so an entry that lies about its size cannot exceed what was
 * charged: memory stays bounded by the budget.
 */
export function unpack(bytes: Uint8Array, budget: ArchiveBudget, depth: number): ArchiveEntry[] {
  budget.checkDepth(depth);
  let count = 0;
  let declared = 0;
  unzipSync(bytes, {
    filter(file) {
      if (!file.name.endsWith('/')) {
        count++;
        declared += file.originalSize;
      }
      return false;
    },
  });
  budget.charge(count, declared);
  const files = unzipSync(bytes, { filter: (file) => !file.name.endsWith('/') && !file.name.startsWith('__MACOSX/') });
  return Object.entries(files).map(([name, data]) => ({ name, bytes: data }));
}

/** Checks an Office document's container against the limits without keeping what it inflates. */
export function checkContainer(bytes: Uint8Array, limits: ArchiveLimits): void {
  let count = 0;
  let declared = 0;
  unzipSync(bytes, {
    filter(file) {
      count++;
      declared += file.originalSize;
      return false;
    },
  });
  new ArchiveBudget(limits).charge(count, declared);
}
