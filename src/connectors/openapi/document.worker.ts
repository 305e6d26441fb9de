/**
 * Loads an imported OpenAPI document off the event loop: parsing YAML, validating, upgrading Swagger 2.0 and listing
 * the operations took 1.0-1.4 s of one thread for the corpus's 3-4 MB documents (and grows with the 25 MiB a request
 * may carry). The parent (document-loader.ts, through thread-pool.ts) bounds it with a deadline and a heap.
 */
import { AppError, type ErrorCode, type ValidationIssue } from '../../errors.js';
import { serveThread } from '../../lib/thread-serve.js';
import { listOperations, type CatalogOperation } from './catalog.js';
import { loadOpenApiDocument, type LoadedDocument } from './document.js';

export type DocumentLoadReply =
  | { ok: true; meta: Omit<LoadedDocument, 'document'>; text: string; operations: CatalogOperation[] }
  | { ok: false; code: ErrorCode; message: string; issues?: ValidationIssue[] };

// The parser loads lazily: one tiny document first, so a job's deadline never includes loading the libraries.
await loadOpenApiDocument('openapi: 3.0.3\ninfo: {title: warm-up, version: "1"}\npaths: {}\n').catch(() => undefined);

serveThread(async ({ input }: { input: unknown }): Promise<DocumentLoadReply> => {
  try {
    const { document, ...meta } = await loadOpenApiDocument(input);
    return { ok: true, meta, text: JSON.stringify(document), operations: listOperations(document) };
  } catch (e) {
    // The refusal travels as data and becomes the same AppError on the other side.
    if (e instanceof AppError) return { ok: false, code: e.code, message: e.message, issues: e.issues };
    throw e;
  }
});
