import type { ExtractorRegistry } from './extractor.js';
import type { OcrEngine } from './ocr.extractor.js';
import { pdfExtractor } from './pdf.extractor.js';
import { csvExtractor, xlsExtractor, xlsxExtractor } from './sheet.extractor.js';
import { svgExtractor, txtExtractor } from './text.extractor.js';
import { docExtractor, docxExtractor } from './word.extractor.js';
import { zipExtractor } from './zip.extractor.js';

export type { ExtractContext, Extractor, ExtractorRegistry } from './extractor.js';
export { OcrEngine } from './ocr.extractor.js';

/** One extractor per accepted kind: adding a kind is one file and one line here. */
export function createExtractors(ocr: OcrEngine): ExtractorRegistry {
  return {
    pdf: pdfExtractor,
    doc: docExtractor,
    docx: docxExtractor,
    txt: txtExtractor,
    csv: csvExtractor,
    xls: xlsExtractor,
    xlsx: xlsxExtractor,
    svg: svgExtractor,
    png: ocr.extract,
    jpeg: ocr.extract,
    gif: ocr.extract,
    webp: ocr.extract,
    zip: zipExtractor,
  };
}
