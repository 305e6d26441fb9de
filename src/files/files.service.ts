import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId, UUID_RE } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { PublicUrls } from '../lib/urls.js';
import type { TaskFile } from '../tasks/task.types.js';
import type { ArchiveLimits, ArchiveSpent } from './archive.js';
import type { BlobStore } from './blob-store.js';
import type { FileDisposal } from './file-disposal.js';
import { ACCEPTED_LABELS, detectKind, KIND_INFO, type FileKind } from './file-kinds.js';
import { PRESIGN_TTL_MS, type FileSigner } from './file-signer.js';
import type { TextExtraction } from './extraction-pool.js';
import type { ContentLimits } from './extractors/extractor.js';
import { ImageHeaderError, isImageKind, overImageLimits, readImageSize } from './image-header.js';
import type { FileRecord, FilesRepository } from './files.repository.js';
import { withoutNul } from '../lib/nul-text.js';
import { storageFailure } from './blob-store-errors.js';

/** A file as received: its name as the caller gave it and its bytes. */
export interface IncomingFile {
  name: string;
  bytes: Uint8Array;
}

/** Typed and extracted, not yet stored. */
export interface PreparedFile {
  name: string;
  kind: FileKind;
  mimeType: string;
  bytes: Uint8Array;
  sha256: string;
  text: string;
}

/** Stored, with its presigned URL. */
export interface StoredFile {
  id: string;
  organizationId: string;
  name: string;
  kind: FileKind;
  mimeType: string;
  size: number;
  url: string;
  text: string | null;
  createdAt: number;
}

export interface FilesLimits {
  maxFileBytes: number;
  maxRequestBytes: number;
  archive: ArchiveLimits;
  content: ContentLimits;
}

/**
 * What an upload goes with (docs/decisions.md, "Files: lifetime"): the task it was sent to, or the knowledge document
 * created for it (`documentIds[i]` for the i-th file). Both ids are drawn before the files are stored.
 */
export type FileHolder = { taskId: string } | { documentIds: readonly string[] };

/** The most extracted text one file contributes to a task; the whole text stays stored with the file. */
export const MAX_TASK_TEXT_CHARS = 100_000;

/**
 * The upload pipeline shared by the webhook receiver and knowledge-base documents:
 * type (extension + content), limits, extraction, storage behind a BlobStore, presigned URLs.
 * `prepare` refuses (413/415) before anything is stored; `store` records every file of a request or none.
 */
export class FilesService {
  constructor(
    private readonly repo: FilesRepository,
    private readonly blobs: BlobStore,
    private readonly signer: FileSigner,
    private readonly extraction: TextExtraction,
    private readonly clock: Clock,
    private readonly urls: PublicUrls,
    readonly limits: FilesLimits,
    private readonly log: Logger,
    private readonly disposal: Pick<FileDisposal, 'discard'>,
  ) {}

  /** 413 naming the file when one file is over the per-file limit. Streaming receivers call it as bytes arrive. */
  checkFileSize(name: string, size: number): void {
    if (size > this.limits.maxFileBytes) {
      throw new AppError('too_large', `File '${name}' is larger than the limit of ${this.limits.maxFileBytes} bytes`);
    }
  }

  checkRequestSize(total: number): void {
    if (total > this.limits.maxRequestBytes) {
      throw new AppError('too_large', `Request too large: files may total at most ${this.limits.maxRequestBytes} bytes`);
    }
  }

  /**
   * Types, checks and extracts every file for the organization (its turn in the extraction host's fair queue).
   * Throws 413/415 naming the first bad file; stores nothing.
   */
  async prepare(organizationId: string, files: IncomingFile[]): Promise<PreparedFile[]> {
    this.checkRequestSize(files.reduce((n, f) => n + f.bytes.byteLength, 0));
    for (const f of files) this.checkFileSize(f.name, f.bytes.byteLength);
    // One budget for the whole request: a bomb split over several archives is still a bomb.
    let spent: ArchiveSpent = { entries: 0, bytes: 0 };
    const out: PreparedFile[] = [];
    for (const f of files) {
      const kind = await detectKind(f.name, f.bytes);
      if (!kind) throw new AppError('unsupported_media', `Unsupported file type: '${f.name}' (accepted: ${ACCEPTED_LABELS})`);
      this.checkImage(f.name, kind, f.bytes);
      const result = await this.extraction.extract(organizationId, { name: f.name, kind, bytes: f.bytes, archive: this.limits.archive, spent, limits: this.limits.content });
      this.log.debug({ file_kind: kind, size: f.bytes.byteLength, ms: result.ms, peak_rss_mb: result.peakRssMb }, 'file extracted');
      if (!result.ok) {
        if (result.failure === 'too_large') throw new AppError('too_large', `File '${f.name}' ${result.reason}`);
        if (result.failure === 'unavailable') throw new AppError('unavailable', `File '${f.name}' could not be read now: ${result.reason}`, { retryAfter: 5 });
        this.log.info({ reason: result.reason, file_kind: kind }, 'file could not be read');
        throw new AppError('unsupported_media', `File '${f.name}' could not be read as ${KIND_INFO[kind].label}`);
      }
      spent = result.spent;
      const text = withoutNul(result.text);
      out.push({
        name: f.name,
        kind,
        mimeType: KIND_INFO[kind].mimeType,
        bytes: f.bytes,
        sha256: createHash('sha256').update(f.bytes).digest('hex'),
        text,
      });
    }
    return out;
  }

  /**
   * Image dimensions from the header, on the main thread before any decoder runs: microseconds, and a 60000x60000
   * PNG is refused (413) instead of allocating 14 GB. A header that cannot be read is refused (415).
   */
  private checkImage(name: string, kind: FileKind, bytes: Uint8Array): void {
    if (!isImageKind(kind)) return;
    let over: string | undefined;
    try {
      over = overImageLimits(readImageSize(kind, bytes), this.limits.content.image);
    } catch (e) {
      if (e instanceof ImageHeaderError) throw new AppError('unsupported_media', `File '${name}' could not be read as ${KIND_INFO[kind].label}: ${e.message}`);
      throw e;
    }
    if (over) throw new AppError('too_large', `File '${name}' is too large to read: the image is ${over}`);
  }

  /**
   * Stores prepared files for the organization: every row and blob, or (on failure) none of them. `holder`: what they
   * are uploaded for, whose id is chosen before they are stored, and which they go with (docs/decisions.md, "Files:
   * lifetime"): a task (all of them), or the knowledge documents to be created for them (one each, in order).
   *
   * Rows first, then blobs: a process that dies in between leaves rows (an orphan the file sweep deletes after its
   * grace, once its holder still does not exist), never a blob that no row names. Nobody knows the ids before this
   * returns, so no reader meets a row whose blob is not written yet. A blob store that fails or does not answer is a
   * 503 (storageFailure).
   */
  async store(organizationId: string, prepared: PreparedFile[], holder?: FileHolder): Promise<StoredFile[]> {
    if (holder && 'documentIds' in holder && holder.documentIds.length !== prepared.length) throw new Error('one document id per file');
    const now = this.clock.now();
    const records: FileRecord[] = prepared.map((p, i) => {
      const id = newId();
      return {
        id,
        organizationId,
        name: p.name,
        kind: p.kind,
        mimeType: p.mimeType,
        size: p.bytes.byteLength,
        sha256: p.sha256,
        blobKey: `${organizationId}/${id}`,
        text: p.text === '' ? null : p.text,
        createdAt: now,
        taskId: holder && 'taskId' in holder ? holder.taskId : null,
        documentId: holder && 'documentIds' in holder ? holder.documentIds[i]! : null,
      };
    });
    await this.repo.insertMany(records);
    try {
      for (let i = 0; i < records.length; i++) await this.blobs.put(records[i]!.blobKey, prepared[i]!.bytes, records[i]!.mimeType);
    } catch (e) {
      await this.discard(organizationId, records).catch((err) => this.log.warn({ err }, 'could not remove the rows of a failed upload'));
      throw storageFailure(e, this.log);
    }
    return records.map((r) => this.present(r));
  }

  /** prepare + store, for the task `taskId` when given. */
  async ingest(organizationId: string, files: IncomingFile[], taskId?: string): Promise<StoredFile[]> {
    return this.store(organizationId, await this.prepare(organizationId, files), taskId === undefined ? undefined : { taskId });
  }

  /**
   * A submission's uploads, stored under the id their task will have, so that they go with it: `taskId` (a
   * continuation's), else a fresh id drawn here, returned as `newTaskId` for the submission to create its task under
   * (TaskSubmission.newTaskId). Call it only with files: a call without them draws and stores nothing.
   */
  async ingestForTask(organizationId: string, files: IncomingFile[], taskId: string | undefined): Promise<{ stored: StoredFile[]; newTaskId?: string }> {
    const newTaskId = taskId === undefined ? newId() : undefined;
    return { stored: await this.ingest(organizationId, files, taskId ?? newTaskId), newTaskId };
  }

  /** Removes stored files (rows, text, blobs) whose holder was never created: a refused submission's or document's. */
  async discard(organizationId: string, files: { id: string }[]): Promise<void> {
    if (!files.length) return;
    await this.disposal.discard(organizationId, files.map((f) => f.id));
  }

  async get(organizationId: string, id: string): Promise<StoredFile> {
    const r = UUID_RE.test(id) ? await this.repo.find(organizationId, id) : undefined;
    if (!r) throw AppError.notFound('File');
    return this.present(r);
  }

  /** `{base_url}/v1/files/{id}?expires=..&sig=..`: valid 30 days after upload, for this organization's file only. */
  presignedUrl(organizationId: string, id: string, createdAt: number): string {
    const expires = Math.floor((createdAt + PRESIGN_TTL_MS) / 1000);
    const sig = this.signer.sign(organizationId, id, expires);
    return `${this.urls.api}/v1/files/${id}?expires=${expires}&sig=${sig}`;
  }

  /**
   * The bytes behind a presigned URL. Every failure (unknown file, bad or expired signature) is the same 403,
   * so a URL cannot be used to learn which file ids exist.
   */
  async openSigned(id: string, expires: string | undefined, sig: string | undefined): Promise<{ file: StoredFile; bytes: Buffer }> {
    const denied = new AppError('forbidden', 'Invalid or expired file signature');
    const exp = Number(expires);
    if (!sig || !expires || !/^\d{1,12}$/.test(expires) || !UUID_RE.test(id)) throw denied;
    if (exp * 1000 < this.clock.now()) throw denied;
    const owner = await this.repo.findOwner(id);
    if (!owner || !this.signer.verify(owner, id, exp, sig)) throw denied;
    return this.open(owner, id);
  }

  /**
   * The bytes of a file of the organization (API-key access); 404 for another organization's file, 503 (or 502) when
   * the blob store fails (blob-store-errors.ts).
   */
  async open(organizationId: string, id: string): Promise<{ file: StoredFile; bytes: Buffer }> {
    const r = UUID_RE.test(id) ? await this.repo.find(organizationId, id) : undefined;
    if (!r) throw AppError.notFound('File');
    let bytes: Buffer | undefined;
    try {
      bytes = await this.blobs.get(r.blobKey);
    } catch (e) {
      throw storageFailure(e, this.log);
    }
    if (!bytes) throw AppError.notFound('File');
    return { file: this.present(r), bytes };
  }

  /** How a stored file is handed to a task: its URL always, its text (bounded) for the LLM context. */
  toTaskFile(f: StoredFile): TaskFile {
    const text =
      f.text === null ? undefined : f.text.length > MAX_TASK_TEXT_CHARS ? `${f.text.slice(0, MAX_TASK_TEXT_CHARS)}\n[... text truncated]` : f.text;
    return { id: f.id, name: f.name, mime_type: f.mimeType, size: f.size, url: f.url, ...(text === undefined ? {} : { text }) };
  }

  private present(r: FileRecord): StoredFile {
    return {
      id: r.id,
      organizationId: r.organizationId,
      name: r.name,
      kind: r.kind as FileKind,
      mimeType: r.mimeType,
      size: r.size,
      url: this.presignedUrl(r.organizationId, r.id, r.createdAt),
      text: r.text,
      createdAt: r.createdAt,
    };
  }
}
