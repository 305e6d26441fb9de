import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import { decodeText, extensionOf } from '../files/file-kinds.js';
import type { FilesService, IncomingFile, PreparedFile } from '../files/files.service.js';
import { isEgressRefused, type SafeFetch } from '../net/index.js';
import { htmlToText } from './html-text.js';

/**
 * Turns a document's bytes into text. Office, PDF, spreadsheet, image and archive types go through the files
 * domain's pipeline (type check by extension and content, limits, extraction, OCR); the text formats a knowledge
 * base commonly holds and the upload pipeline does not accept (Markdown, HTML, JSON, YAML) are read here.
 */

const TEXT_FORMATS: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  html: 'text/html',
  htm: 'text/html',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
};

/** Content types of fetched documents, mapped to the extension the files pipeline understands. */
const EXTENSION_OF_TYPE: Record<string, string> = {
  'application/pdf': 'pdf',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/csv': 'csv',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/x-markdown': 'md',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/json': 'json',
  'application/yaml': 'yaml',
  'text/yaml': 'yaml',
  'image/svg+xml': 'svg',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/zip': 'zip',
};

/** A failure to read a document. `permanent` failures end the document `error` at once; others are retried. */
export class DocumentReadError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'DocumentReadError';
  }
}

export interface ReadDocument {
  mimeType: string;
  text: string;
  /** True when the text is one table (CSV, spreadsheet): the chunker keeps its header on every chunk. */
  table: boolean;
}

export interface DocumentReaderLimits {
  maxBytes: number;
  fetchTimeoutMs: number;
}

export class DocumentReader {
  constructor(
    private readonly files: FilesService,
    private readonly fetch: SafeFetch,
    private readonly limits: DocumentReaderLimits,
  ) {}

  /** Types, checks and extracts uploads (413/415 naming the file, nothing stored); the files pipeline stores them. */
  async prepareUploads(organizationId: string, files: IncomingFile[]): Promise<PreparedFile[]> {
    // Limits first, over the whole request, before any extraction work.
    this.files.checkRequestSize(files.reduce((n, f) => n + f.bytes.byteLength, 0));
    for (const f of files) this.files.checkFileSize(f.name, f.bytes.byteLength);
    const delegated = files.filter((f) => !ownFormat(f.name));
    const extracted = await this.files.prepare(organizationId, delegated);
    const prepared = new Map<IncomingFile, PreparedFile>(delegated.map((f, i) => [f, extracted[i]!]));
    for (const f of files) {
      const mimeType = ownFormat(f.name);
      if (!mimeType) continue;
      const decoded = decodeText(f.bytes);
      if (decoded === undefined) throw new AppError('unsupported_media', `File '${f.name}' is not readable text`);
      prepared.set(f, {
        name: f.name,
        kind: 'txt',
        mimeType,
        bytes: f.bytes,
        sha256: createHash('sha256').update(f.bytes).digest('hex'),
        text: toText(mimeType, decoded),
      });
    }
    return files.map((f) => prepared.get(f)!);
  }

  /** Fetches a document URL under the egress policy and extracts its text. */
  async fetchUrl(organizationId: string, url: string, signal: AbortSignal): Promise<ReadDocument> {
    const timeout = AbortSignal.timeout(this.limits.fetchTimeoutMs);
    const combined = AbortSignal.any([signal, timeout]);
    let res: Response;
    try {
      res = await this.fetch(url, { headers: { accept: 'text/html, text/markdown, text/plain, application/pdf, */*;q=0.8' }, signal: combined });
    } catch (e) {
      if (isEgressRefused(e)) throw new DocumentReadError(e instanceof Error ? e.message : String(e), true);
      if (signal.aborted) throw e;
      const why = timeout.aborted ? `timed out after ${this.limits.fetchTimeoutMs} ms` : (e as Error).message;
      throw new DocumentReadError(`Could not fetch the document: ${why}`, false);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      const transient = res.status >= 500 || res.status === 408 || res.status === 429;
      throw new DocumentReadError(`Fetching the document answered HTTP ${res.status}`, !transient);
    }
    const bytes = await this.readCapped(res, url);
    const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    return this.extract(organizationId, fileNameFor(url, contentType), contentType, bytes);
  }

  private async extract(organizationId: string, name: string, contentType: string, bytes: Uint8Array): Promise<ReadDocument> {
    const own = ownFormat(name) ?? (TEXT_FORMATS[EXTENSION_OF_TYPE[contentType] ?? ''] ? contentType : undefined);
    if (own) {
      const decoded = decodeText(bytes);
      if (decoded === undefined) throw new DocumentReadError('The document is not readable text', true);
      return { mimeType: own, text: toText(own, decoded), table: false };
    }
    try {
      const [p] = await this.files.prepare(organizationId, [{ name, bytes }]);
      return { mimeType: p!.mimeType, text: p!.text, table: p!.kind === 'csv' };
    } catch (e) {
      // A file the extraction host refused (413/415, a crash or a timeout there included) fails the document for
      // good: retrying it would only repeat the failure. A busy host (503) is worth a later attempt.
      if (e instanceof AppError) throw new DocumentReadError(e.message, e.code !== 'unavailable');
      throw e;
    }
  }

  private async readCapped(res: Response, url: string): Promise<Uint8Array> {
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > this.limits.maxBytes) {
      await res.body?.cancel().catch(() => {});
      throw new DocumentReadError(`The document at ${url} is larger than the limit of ${this.limits.maxBytes} bytes`, true);
    }
    const parts: Uint8Array[] = [];
    let total = 0;
    if (res.body) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        total += chunk.byteLength;
        if (total > this.limits.maxBytes) {
          await res.body.cancel().catch(() => {});
          throw new DocumentReadError(`The document at ${url} is larger than the limit of ${this.limits.maxBytes} bytes`, true);
        }
        parts.push(chunk);
      }
    }
    return Buffer.concat(parts);
  }
}

function ownFormat(name: string): string | undefined {
  const ext = extensionOf(name);
  return ext ? TEXT_FORMATS[ext] : undefined;
}

function toText(mimeType: string, decoded: string): string {
  const text = decoded.replace(/\r\n?/g, '\n');
  return mimeType === 'text/html' ? htmlToText(text) : text;
}

/** A file name the type check can use: the URL's last path segment, or one named after the content type. */
export function fileNameFor(url: string, contentType: string): string {
  let base = 'document';
  try {
    const seg = decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? '');
    if (seg) base = seg;
  } catch {
    // keep the default name
  }
  const ext = extensionOf(base);
  const byType = EXTENSION_OF_TYPE[contentType];
  // A page like /faq or /docs/v2 has no extension; an HTML page served from /page.php is still HTML.
  if (byType && (!ext || (byType === 'html' && !TEXT_FORMATS[ext] && !['pdf', 'docx', 'doc', 'xlsx', 'xls', 'csv', 'txt'].includes(ext)))) {
    return `${base}.${byType}`;
  }
  return ext ? base : `${base}.${byType ?? 'txt'}`;
}
