import type { ArchiveBudget } from '../archive.js';
import type { FileKind } from '../file-kinds.js';
import type { ImageLimits } from '../image-header.js';

/** What an extractor may decode: checked from headers and counts before the decoder sees the bytes. */
export interface ContentLimits {
  image: ImageLimits;
  /** Cells across all sheets of one workbook (XLSX, XLS). */
  maxSheetCells: number;
}

/** A file is within its container's limits but its content is over one of ContentLimits: 413, not 415. */
export class ContentLimitError extends Error {}

/** What an extractor may use beyond the bytes: the archive budget and a way to read nested files (ZIP). */
export interface ExtractContext {
  name: string;
  kind: FileKind;
  /** Archive nesting level of this file: 0 for an uploaded file. */
  depth: number;
  budget: ArchiveBudget;
  limits: ContentLimits;
  /** Types and extracts a file found inside this one; undefined when its type is not accepted. */
  extractNested(name: string, bytes: Uint8Array, depth: number): Promise<{ kind: FileKind; text: string } | undefined>;
}

/** Turns one kind of file into plain text for the LLM context. Throws when the file cannot be read. */
export type Extractor = (bytes: Uint8Array, ctx: ExtractContext) => Promise<string>;

export type ExtractorRegistry = Record<FileKind, Extractor>;

export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
