import CFB from 'cfb';
import { fileTypeFromBuffer } from 'file-type';

/**
 * The file types a caller may upload (spec 4.5 rule 4), and how each is recognised. A file is accepted only when
 * its extension and its content agree: the name alone is the caller's claim, the bytes are the evidence.
 */
export const FILE_KINDS = ['pdf', 'doc', 'docx', 'txt', 'csv', 'xls', 'xlsx', 'svg', 'png', 'jpeg', 'gif', 'webp', 'zip'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

export interface FileKindInfo {
  label: string;
  mimeType: string;
  extensions: readonly string[];
}

export const KIND_INFO: Record<FileKind, FileKindInfo> = {
  pdf: { label: 'PDF', mimeType: 'application/pdf', extensions: ['pdf'] },
  doc: { label: 'DOC', mimeType: 'application/msword', extensions: ['doc'] },
  docx: { label: 'DOCX', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', extensions: ['docx'] },
  txt: { label: 'TXT', mimeType: 'text/plain', extensions: ['txt'] },
  csv: { label: 'CSV', mimeType: 'text/csv', extensions: ['csv'] },
  xls: { label: 'XLS', mimeType: 'application/vnd.ms-excel', extensions: ['xls'] },
  xlsx: { label: 'XLSX', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', extensions: ['xlsx'] },
  svg: { label: 'SVG', mimeType: 'image/svg+xml', extensions: ['svg'] },
  png: { label: 'PNG', mimeType: 'image/png', extensions: ['png'] },
  jpeg: { label: 'JPEG', mimeType: 'image/jpeg', extensions: ['jpg', 'jpeg'] },
  gif: { label: 'GIF', mimeType: 'image/gif', extensions: ['gif'] },
  webp: { label: 'WEBP', mimeType: 'image/webp', extensions: ['webp'] },
  zip: { label: 'ZIP', mimeType: 'application/zip', extensions: ['zip'] },
};

export const ACCEPTED_LABELS = FILE_KINDS.map((k) => KIND_INFO[k].label).join(', ');

const BY_EXTENSION = new Map<string, FileKind>(FILE_KINDS.flatMap((k) => KIND_INFO[k].extensions.map((e) => [e, k] as const)));

/** The `ext` file-type reports for the binary kinds (text kinds have no magic number). */
const SNIFFED: Partial<Record<string, FileKind>> = {
  pdf: 'pdf',
  docx: 'docx',
  xlsx: 'xlsx',
  png: 'png',
  jpg: 'jpeg',
  gif: 'gif',
  webp: 'webp',
  zip: 'zip',
};

const TEXT_KINDS: ReadonlySet<FileKind> = new Set(['txt', 'csv', 'svg']);

export function extensionOf(name: string): string | undefined {
  const base = name.split(/[\\/]/).pop() ?? name;
  const dot = base.lastIndexOf('.');
  return dot > 0 && dot < base.length - 1 ? base.slice(dot + 1).toLowerCase() : undefined;
}

/**
 * The kind of a file, or undefined when it is not an accepted type or its content contradicts its name.
 * Without an extension the content alone decides (a binary signature, else decodable text is TXT).
 */
export async function detectKind(name: string, bytes: Uint8Array): Promise<FileKind | undefined> {
  const ext = extensionOf(name);
  const claimed = ext === undefined ? undefined : BY_EXTENSION.get(ext);
  if (ext !== undefined && claimed === undefined) return undefined;
  const sniffed = await sniff(bytes);
  if (claimed === undefined) return sniffed;
  if (TEXT_KINDS.has(claimed)) {
    if (sniffed !== 'txt' && sniffed !== 'svg') return undefined;
    return claimed === 'svg' ? (sniffed === 'svg' ? 'svg' : undefined) : claimed;
  }
  // An Office document is a ZIP inside; file-type names it when it can, and a ZIP it cannot name is still refused.
  return sniffed === claimed ? claimed : undefined;
}

/** What the bytes say, independent of the name. */
async function sniff(bytes: Uint8Array): Promise<FileKind | undefined> {
  const found = await fileTypeFromBuffer(bytes);
  if (found) {
    if (found.ext === 'cfb') return compoundKind(bytes);
    // file-type reports SVG only through an XML sniff on some inputs; treat it as text below.
    if (found.ext !== 'xml') return SNIFFED[found.ext];
  }
  const text = decodeText(bytes);
  if (text === undefined) return undefined;
  return /<svg[\s>]/i.test(text.slice(0, 4096)) ? 'svg' : 'txt';
}

/** Word 97 and Excel 97 share the OLE compound container; the stream names tell them apart. */
function compoundKind(bytes: Uint8Array): FileKind | undefined {
  try {
    const container = CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: 'buffer' });
    const names = new Set(container.FileIndex.map((e) => e.name));
    if (names.has('WordDocument')) return 'doc';
    if (names.has('Workbook') || names.has('Book')) return 'xls';
  } catch {
    // a damaged container is not a document we can read
  }
  return undefined;
}

/**
 * Decodes text the way a reader would (UTF-8, or UTF-16 with a byte-order mark). Binary content (invalid UTF-8,
 * NUL bytes, many control characters) is refused so an executable cannot pass as a .txt.
 */
export function decodeText(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    if (bytes[0] === 0xff && bytes[1] === 0xfe) text = new TextDecoder('utf-16le', { fatal: true }).decode(bytes.subarray(2));
    else if (bytes[0] === 0xfe && bytes[1] === 0xff) text = new TextDecoder('utf-16be', { fatal: true }).decode(bytes.subarray(2));
    else text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
  let control = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return undefined;
    if (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) control++;
  }
  return control > text.length / 100 + 1 ? undefined : text;
}
