import type { Config } from '../config.js';
import type { Clock } from '../lib/clock.js';
import { closeOnStop, type Startable } from '../lib/lifecycle.js';
import type { Logger } from '../lib/logger.js';
import type { PublicUrls } from '../lib/urls.js';
import type { Db } from '../db/database.js';
import { DEFAULT_ARCHIVE_LIMITS } from './archive.js';
import { createBlobStore } from './blob-store.js';
import { ExtractionPool } from './extraction-pool.js';
import { FileDisposal } from './file-disposal.js';
import { FileLifetimeRepository } from './file-lifetime.repository.js';
import { FileSigner } from './file-signer.js';
import { FileSweep } from './file-sweep.js';
import { FilesRepository } from './files.repository.js';
import { FilesService } from './files.service.js';

export interface FilesModule {
  files: FilesService;
  /** Removes the blobs of files deleted with their tasks (the tasks domain calls it after its commits). */
  disposal: FileDisposal;
  /** The worker role's sweep of failed blob deletions and orphan uploads. */
  sweep: FileSweep;
  /** Closes the extraction processes when the process stops. */
  extraction: Startable;
}

/** Files (issue 4): uploads, signed downloads, content extraction, and their lifetime. */
export async function createFilesModule(d: {
  db: Db;
  config: Config;
  masterKey: Buffer;
  clock: Clock;
  urls: PublicUrls;
  log: Logger;
  /** Moves the task inbox into `tasks` before uploads are judged orphans (the tasks domain is built later: a closure). */
  settleTasks: () => Promise<unknown>;
  /** /metrics: blob deletions that failed, orphan uploads deleted. */
  onBlobDeletesFailed?: (count: number) => void;
  onOrphans?: (count: number) => void;
}): Promise<FilesModule> {
  const { maxImagePixels, maxImageSide, maxSheetCells, ...host } = d.config.extraction;
  // Uploads are read in child processes (started on the first upload), never on this process's main thread.
  const extraction = new ExtractionPool(host, d.log);
  // No accepted file is larger than either upload limit; the larger of the two still reads a file stored before the
  // other was lowered.
  const blobs = await createBlobStore(d.config.blob, d.config.dataDir, Math.max(d.config.files.maxFileBytes, d.config.files.maxRequestBytes));
  const lifetime = new FileLifetimeRepository(d.db);
  const disposal = new FileDisposal({ repo: lifetime, blobs, clock: d.clock, log: d.log, onFailed: d.onBlobDeletesFailed });
  const files = new FilesService(
    new FilesRepository(d.db),
    blobs,
    new FileSigner(d.masterKey),
    extraction,
    d.clock,
    d.urls,
    { ...d.config.files, archive: DEFAULT_ARCHIVE_LIMITS, content: { image: { maxPixels: maxImagePixels, maxSide: maxImageSide }, maxSheetCells } },
    d.log,
    disposal,
  );
  const sweep = new FileSweep({ repo: lifetime, disposal, settleTasks: d.settleTasks, clock: d.clock, log: d.log, onOrphans: d.onOrphans });
  return { files, disposal, sweep, extraction: closeOnStop(() => extraction.close()) };
}
