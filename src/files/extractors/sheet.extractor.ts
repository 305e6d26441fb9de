import Papa from 'papaparse';
import { checkContainer } from '../archive.js';
import { decodeText } from '../file-kinds.js';
import { countXlsCells, countXlsxCells, denseSheetToCsv } from '../sheet-guard.js';
import { ContentLimitError, type Extractor } from './extractor.js';

/** The most text one workbook contributes; a row padded out to column XFD stops here instead of growing. */
export const MAX_SHEET_TEXT_CHARS = 10_000_000;

/**
 * Every sheet as CSV under its name: a table the model reads reliably. The reader loads on first use. Sheets are
 * read dense and written from the cells that exist: the declared range (`!ref`) is never walked, since a hostile
 * file declares A1:XFD1048576 around two cells.
 */
async function workbookText(bytes: Uint8Array): Promise<string> {
  const XLSX = await import('@e965/xlsx');
  const book = XLSX.read(bytes, { type: 'array', dense: true, cellFormula: false, cellHTML: false, cellStyles: false });
  let budget = MAX_SHEET_TEXT_CHARS;
  const parts: string[] = [];
  for (const name of book.SheetNames) {
    const sheet = book.Sheets[name] as unknown as { '!data'?: Parameters<typeof denseSheetToCsv>[0] };
    const { csv, truncated } = denseSheetToCsv(sheet['!data'], (c) => XLSX.utils.format_cell(c as never), budget);
    budget -= csv.length;
    parts.push(`Sheet: ${name}\n${csv.trim()}${truncated ? `\n[... text truncated at ${MAX_SHEET_TEXT_CHARS} characters]` : ''}`);
    if (truncated) break;
  }
  return parts.join('\n\n');
}

function checkCells(count: number | undefined, limit: number): void {
  // More cells than the limit: refused (413) rather than decoded.
  if (count !== undefined && count > limit) throw new ContentLimitError(`the workbook has at least ${count} cells, over the limit of ${limit}`);
}

export const xlsExtractor: Extractor = async (bytes, ctx) => {
  checkCells(countXlsCells(bytes, ctx.limits.maxSheetCells), ctx.limits.maxSheetCells);
  return workbookText(bytes);
};

export const xlsxExtractor: Extractor = async (bytes, ctx) => {
  checkContainer(bytes, ctx.budget.limits);
  checkCells(countXlsxCells(bytes, ctx.limits.maxSheetCells), ctx.limits.maxSheetCells);
  return workbookText(bytes);
};

/** CSV is parsed and written back with commas, so semicolon- or tab-separated exports read the same way. */
export const csvExtractor: Extractor = async (bytes) => {
  const text = decodeText(bytes) ?? '';
  const parsed = Papa.parse<string[]>(text.trim(), { skipEmptyLines: true });
  if (!parsed.data.length) return '';
  return Papa.unparse(parsed.data, { newline: '\n' });
};
