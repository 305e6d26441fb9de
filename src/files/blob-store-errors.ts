import { AppError } from '../errors.js';
import type { Logger } from '../lib/logger.js';

/** A blob store request that got no whole answer within its deadline (`AGENTRY_S3_TIMEOUT_MS`): the store is stalled. */
export class BlobStoreTimeout extends Error {
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'BlobStoreTimeout';
  }
}

/** A read answered with more bytes than any stored file can have: the store misbehaves, and is not read further. */
export class BlobTooLarge extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlobTooLarge';
  }
}

/**
 * How a failing blob store reaches whoever uploads or downloads: the contract's 503 "a dependency is down" with
 * `Retry-After` (a timeout says so), or 502 for an answer no stored file can have. The cause (key, status, the store's
 * message) goes to the log only.
 */
export function storageFailure(e: unknown, log: Logger): AppError {
  if (e instanceof AppError) return e;
  log.error({ err: e }, 'file storage failed');
  if (e instanceof BlobTooLarge) return new AppError('upstream', 'File storage answered with more bytes than any stored file has', { cause: e });
  const message = e instanceof BlobStoreTimeout ? 'File storage did not answer in time; retry later' : 'File storage is unavailable; retry later';
  return new AppError('unavailable', message, { retryAfter: 5, cause: e });
}
