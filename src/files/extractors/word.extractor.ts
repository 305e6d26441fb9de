import mammoth from 'mammoth';
import WordExtractor from 'word-extractor';
import { checkContainer } from '../archive.js';
import { asBuffer, type Extractor } from './extractor.js';

/** Word 97-2003 (.doc): the body text, then headers, footers and footnotes when present. */
export const docExtractor: Extractor = async (bytes) => {
  const doc = await new WordExtractor().extract(asBuffer(bytes));
  return [doc.getBody(), doc.getHeaders({ includeFooters: true }), doc.getFootnotes(), doc.getEndnotes()]
    .map((s) => s.trim())
    .filter(Boolean)
    .join('\n\n');
};

/** Word 2007+ (.docx): raw text, paragraphs separated by blank lines. */
export const docxExtractor: Extractor = async (bytes, ctx) => {
  checkContainer(bytes, ctx.budget.limits);
  const { value } = await mammoth.extractRawText({ buffer: asBuffer(bytes) });
  return value.replace(/\n{3,}/g, '\n\n').trim();
};
