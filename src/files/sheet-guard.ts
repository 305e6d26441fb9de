import CFB from 'cfb';
import { unzipSync } from 'fflate';

/**
 * Spreadsheet checks that run before (and instead of) anything that trusts a sheet's declared range. A 1.5 KB XLSX
 * whose `<dimension ref="A1:XFD1048576">` declares 17 billion cells made the reader's CSV writer walk every one of
 * them; here cells are counted as they occur in the file and the text is written from the cells that exist.
 */

const isDelimiter = (c: number | undefined) => c === 0x20 || c === 0x3e || c === 0x2f || c === 0x09 || c === 0x0a || c === 0x0d;

/** Counts `<c ...>` elements (with or without a namespace prefix) in every worksheet of an XLSX, up to `limit` + 1. */
export function countXlsxCells(bytes: Uint8Array, limit: number): number {
  const sheets = unzipSync(bytes, { filter: (f) => /^xl\/worksheets\/[^/]+\.xml$/i.test(f.name) });
  let cells = 0;
  for (const xml of Object.values(sheets)) {
    for (let i = xml.indexOf(0x3c); i !== -1 && i < xml.length; i = xml.indexOf(0x3c, i + 1)) {
      let j = i + 1;
      // An optional prefix such as `x:`, at most 16 characters of a name.
      for (let k = 0; k < 16 && j < xml.length && xml[j] !== 0x3a && isNameChar(xml[j]!); k++) j++;
      const start = xml[j] === 0x3a ? j + 1 : i + 1;
      if (xml[start] === 0x63 /* c */ && isDelimiter(xml[start + 1]) && ++cells > limit) return cells;
    }
  }
  return cells;
}

const isNameChar = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f;

/** BIFF cell records; MULRK and MULBLANK hold several cells each. */
const BIFF_CELL = new Set([0x0006, 0x00fd, 0x0203, 0x027e, 0x0201, 0x0204, 0x0205, 0x00d6, 0x0106, 0x0406]);
const BIFF_MULRK = 0x00bd;
const BIFF_MULBLANK = 0x00be;

/** Counts the cell records of an XLS (BIFF5/8) workbook stream, up to `limit` + 1. Undefined when there is none. */
export function countXlsCells(bytes: Uint8Array, limit: number): number | undefined {
  const container = CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: 'buffer' });
  const entry = CFB.find(container, 'Workbook') ?? CFB.find(container, 'Book');
  const content = entry?.content as Uint8Array | undefined;
  if (!content) return undefined;
  let cells = 0;
  // Each record is a 2-byte type, a 2-byte length and its data: the loop advances at least 4 bytes a step.
  for (let i = 0; i + 4 <= content.length; ) {
    const type = content[i]! | (content[i + 1]! << 8);
    const length = content[i + 2]! | (content[i + 3]! << 8);
    if (BIFF_CELL.has(type)) cells++;
    else if (type === BIFF_MULRK) cells += Math.max(0, Math.floor((length - 6) / 6));
    else if (type === BIFF_MULBLANK) cells += Math.max(0, Math.floor((length - 6) / 2));
    if (cells > limit) return cells;
    i += 4 + length;
  }
  return cells;
}

type Cell = { t?: string; v?: unknown; w?: string } | undefined;

/**
 * One sheet (read with `dense: true`) as CSV, from the rows and cells that exist: holes cost nothing, blank rows are
 * left out, and the text stops at `maxChars` so a row padded out to column XFD cannot blow up the output.
 */
export function denseSheetToCsv(rows: (Cell[] | undefined)[] | undefined, format: (c: NonNullable<Cell>) => string, maxChars: number): { csv: string; truncated: boolean } {
  const lines: string[] = [];
  let total = 0;
  if (!rows) return { csv: '', truncated: false };
  let truncated = false;
  // forEach skips the holes of a sparse array: a cell at row 1,048,576 does not cost a million iterations of work.
  rows.forEach((row) => {
    if (truncated || !row) return;
    const fields: string[] = [];
    let used = 0;
    let last = -1;
    row.forEach((cell, col) => {
      if (truncated || !cell) return;
      const text = cell.w ?? (cell.v === undefined || cell.v === null ? '' : format(cell));
      if (text === '') return;
      used += col - last + text.length;
      if (total + used > maxChars) {
        truncated = true;
        return;
      }
      while (fields.length < col) fields.push('');
      fields.push(/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
      last = col;
    });
    if (!fields.length) return;
    const line = fields.join(',');
    total += line.length + 1;
    lines.push(line);
  });
  return { csv: lines.join('\n'), truncated };
}
