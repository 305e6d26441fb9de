import type { Config } from '../config.js';
import type { Clock } from '../lib/clock.js';
import { closeOnStop, type Startable } from '../lib/lifecycle.js';
import type { Logger } from '../lib/logger.js';
import type { PublicUrls } from '../lib/urls.js';
import type { Db } from '../db/database.js';
import { DEFAULT_ARCHIVE_LIMITS } from './archive.js';
import { createBlobStore } from './blob-store.js';
import { ExtractionPool } from './extraction-pool.js';
import { FileSigner } from './file-signer.js';
import { FilesRepository } from './files.repository.js';
import { FilesService } from './files.service.js';

export interface FilesModule {
  files: FilesService;
  /** Closes the extraction processes when the process stops. */
  extraction: Startable;
}

/** Files (issue 4): uploads, signed downloads, content extraction. */
export async function createFilesModule(d: { db: Db; config: Config; masterKey: Buffer; clock: Clock; urls: PublicUrls; log: Logger }): Promise<FilesModule> {
  const { maxImagePixels, maxImageSide, maxSheetCells, ...host } = d.config.extraction;
  // Uploads are read in child processes (started on the first upload), never on this process's main thread.
  const extraction = new ExtractionPool(host, d.log);
  const files = new FilesService(
    new FilesRepository(d.db),
    await createBlobStore(d.config.blob, d.config.dataDir),
    new FileSigner(d.masterKey),
    extraction,
    d.clock,
    d.urls,
    { ...d.config.files, archive: DEFAULT_ARCHIVE_LIMITS, content: { image: { maxPixels: maxImagePixels, maxSide: maxImageSide }, maxSheetCells } },
    d.log,
  );
  return { files, extraction: closeOnStop(() => extraction.close()) };
}
