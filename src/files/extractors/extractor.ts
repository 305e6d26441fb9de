import type { ArchiveBudget } from '../archive.js';
import type { FileKind } from '../file-kinds.js';

/** What an extractor may use beyond the bytes: the archive budget and a way to read nested files (ZIP). */
export interface ExtractContext {
  name: string;
  /** Archive nesting level of this file: 0 for an uploaded file. */
  depth: number;
  budget: ArchiveBudget;
  /** Types and extracts a file found inside this one; undefined when its type is not accepted. */
  extractNested(name: string, bytes: Uint8Array, depth: number): Promise<{ kind: FileKind; text: string } | undefined>;
}

/** Turns one kind of file into plain text for the LLM context. Throws when the file cannot be read. */
export type Extractor = (bytes: Uint8Array, ctx: ExtractContext) => Promise<string>;

export type ExtractorRegistry = Record<FileKind, Extractor>;

export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
