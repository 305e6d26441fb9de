import Papa from 'papaparse';
import { checkContainer } from '../archive.js';
import { decodeText } from '../file-kinds.js';
import type { Extractor } from './extractor.js';

/** Every sheet as CSV under its name: a table the model reads reliably. The reader loads on first use. */
async function workbookText(bytes: Uint8Array): Promise<string> {
  const XLSX = await import('@e965/xlsx');
  const book = XLSX.read(bytes, { type: 'array', cellFormula: false, cellHTML: false, cellStyles: false });
  return book.SheetNames.map((name) => {
    const csv = XLSX.utils.sheet_to_csv(book.Sheets[name]!, { blankrows: false }).trim();
    return `Sheet: ${name}\n${csv}`;
  }).join('\n\n');
}

export const xlsExtractor: Extractor = async (bytes) => workbookText(bytes);

export const xlsxExtractor: Extractor = async (bytes, ctx) => {
  checkContainer(bytes, ctx.budget.limits);
  return workbookText(bytes);
};

/** CSV is parsed and written back with commas, so semicolon- or tab-separated exports read the same way. */
export const csvExtractor: Extractor = async (bytes) => {
  const text = decodeText(bytes) ?? '';
  const parsed = Papa.parse<string[]>(text.trim(), { skipEmptyLines: true });
  if (!parsed.data.length) return '';
  return Papa.unparse(parsed.data, { newline: '\n' });
};
