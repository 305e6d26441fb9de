import { checkContainer } from '../archive.js';
import { asBuffer, type Extractor } from './extractor.js';

// The readers are imported on first use: most processes never see a Word file, and an idle server should stay small.

/** Word 97-2003 (.doc): the body text, then headers, footers and footnotes when present. */
export const docExtractor: Extractor = async (bytes) => {
  const { default: WordExtractor } = await import('word-extractor');
  const doc = await new WordExtractor().extract(asBuffer(bytes));
  return [doc.getBody(), doc.getHeaders({ includeFooters: true }), doc.getFootnotes(), doc.getEndnotes()]
    .map((s) => s.trim())
    .filter(Boolean)
    .join('\n\n');
};

/** Word 2007+ (.docx): raw text, paragraphs separated by blank lines. */
export const docxExtractor: Extractor = async (bytes, ctx) => {
  checkContainer(bytes, ctx.budget.limits);
  const { default: mammoth } = await import('mammoth');
  const { value } = await mammoth.extractRawText({ buffer: asBuffer(bytes) });
  return value.replace(/\n{3,}/g, '\n\n').trim();
};
