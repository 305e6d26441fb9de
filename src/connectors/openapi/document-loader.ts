import { AppError } from '../../errors.js';
import { ThreadPool } from '../../lib/thread-pool.js';
import type { CatalogOperation } from './catalog.js';
import type { JsonObject, LoadedDocument } from './document.js';
import type { DocumentLoadReply } from './document.worker.js';

export interface DocumentLoaderOptions {
  /** Wall-clock time to load one document before its thread is terminated. */
  timeoutMs: number;
  /** V8 heap of the loading thread: a parsed document takes several times its text. */
  heapMb: number;
}

export const DEFAULT_DOCUMENT_LOADER: DocumentLoaderOptions = { timeoutMs: 60_000, heapMb: 2048 };

export interface LoadedImport extends LoadedDocument {
  /** The document as stored (JSON text of `document`). */
  text: string;
  operations: CatalogOperation[];
}

/**
 * Imports are parsed on a worker thread (document.worker.ts), one organization's documents at a time in turn with
 * the others' (thread-pool.ts). A document the thread could not load in time or within its heap is refused as too
 * large (413); a refusal of the document itself is the loader's 422, as if it had run here.
 */
export class DocumentLoader {
  private readonly pool: ThreadPool<{ input: unknown }, DocumentLoadReply>;

  constructor(opts: Partial<DocumentLoaderOptions> = {}) {
    const o = { ...DEFAULT_DOCUMENT_LOADER, ...opts };
    this.pool = new ThreadPool({
      base: import.meta.url,
      module: './document.worker',
      doing: 'loading the document',
      threads: 1,
      timeoutMs: o.timeoutMs,
      heapMb: o.heapMb,
      queuePerOwner: 4,
    });
  }

  async load(organizationId: string, input: unknown): Promise<LoadedImport> {
    const out = await this.pool.run(organizationId, { input });
    if (!out.ok) {
      if (out.failure === 'timeout' || out.failure === 'crashed') throw new AppError('too_large', `The OpenAPI document could not be loaded: ${out.reason}`);
      if (out.failure === 'failed') throw AppError.invalid(['body', 'openapi'], `Invalid OpenAPI document: ${out.reason}`);
      throw new AppError('unavailable', `The OpenAPI document could not be loaded now: ${out.reason}`, { retryAfter: 5 });
    }
    const r = out.value;
    if (!r.ok) throw new AppError(r.code, r.message, { issues: r.issues });
    // Parsing the JSON text here is linear and quick (tens of ms for the largest corpus document); the operation
    // schemas keep it, so the first schema reads after an import read no document.
    return { ...r.meta, document: JSON.parse(r.text) as JsonObject, text: r.text, operations: r.operations };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
