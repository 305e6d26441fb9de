/**
 * The extraction host: a child process of the service that runs the file readers (pdfjs, mammoth, word-extractor,
 * xlsx, papaparse, fflate, tesseract). Whatever a hostile file does here (throw outside any promise, spin, allocate
 * gigabytes) ends at most this process, which the parent kills and replaces; the service's listeners never see it.
 * It is given no environment (no credentials) and reads nothing but the messages it is sent.
 */
import { extractFile, type ExtractJob } from './extract-file.js';
import { createExtractors, OcrEngine } from './extractors/index.js';

const send = (msg: unknown) => process.send?.(msg);
const extractors = createExtractors(new OcrEngine());

process.on('message', (msg: { id: number; job: ExtractJob }) => {
  void extractFile(extractors, msg.job).then(
    (outcome) => send({ id: msg.id, outcome }),
    (e: unknown) => send({ id: msg.id, outcome: { ok: false, failure: 'unreadable', reason: String(e) } }),
  );
});
// The service went away: nothing is left to answer.
process.on('disconnect', () => process.exit(0));
send({ ready: true });
