import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Worker } from 'tesseract.js';
import { isImageKind, overImageLimits, readImageSize } from '../image-header.js';
import { asBuffer, ContentLimitError, type Extractor } from './extractor.js';

/**
 * OCR with one tesseract worker, started on the first image and kept warm (starting one costs most of a second).
 * The English model is read from the @tesseract.js-data/eng package and never downloaded or cached on disk.
 */
export class OcrEngine {
  private worker?: Promise<Worker>;

  readonly extract: Extractor = async (bytes, ctx) => {
    // Also checked on the service's main thread for uploads; here for images found inside archives.
    if (isImageKind(ctx.kind)) {
      const over = overImageLimits(readImageSize(ctx.kind, bytes), ctx.limits.image);
      if (over) throw new ContentLimitError(`the image is ${over}`);
    }
    const worker = await this.start();
    const { data } = await worker.recognize(asBuffer(bytes));
    return data.text.replace(/[ \t]+\n/g, '\n').trim();
  };

  private start(): Promise<Worker> {
    if (!this.worker) {
      const require = createRequire(import.meta.url);
      const langPath = join(dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
      // tesseract.js loads on first use, like the worker itself: most processes never OCR an image.
      this.worker = import('tesseract.js').then(({ createWorker, OEM }) => createWorker('eng', OEM.LSTM_ONLY, { langPath, cacheMethod: 'none', gzip: true }));
      // A failed start must not poison every later image: the next one tries again.
      this.worker.catch(() => (this.worker = undefined));
    }
    return this.worker;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await (await worker.catch(() => undefined))?.terminate();
  }
}
