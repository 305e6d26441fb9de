import type { FastifyRequest } from 'fastify';
import type { Container } from '../container.js';
import { AppError, isAppError } from '../errors.js';
import type { IncomingFile } from '../files/files.service.js';

/**
 * Reads a multipart body: text fields become body values (the first of a repeated name counts), every file part is a
 * file whatever its field name. Sizes and the number of files are enforced while streaming, so an oversized upload
 * is refused (413, naming the file or the limit) without being buffered whole. Shared by the webhook receiver and
 * knowledge-base uploads.
 */
export async function readMultipart(request: FastifyRequest, c: Container): Promise<{ body: Record<string, unknown>; files: IncomingFile[] }> {
  const { maxFileBytes, maxFilesPerRequest } = c.config.files;
  const body: Record<string, unknown> = {};
  const files: IncomingFile[] = [];
  let total = 0;
  // The text fields together are bounded like a JSON body (AGENTRY_MAX_BODY_BYTES): each may be 1 MiB, and a
  // thousand of them would otherwise be buffered whatever the upload limits say.
  let fieldBytes = 0;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxFileBytes } })) {
      if (part.type === 'field') {
        fieldBytes += Buffer.byteLength(part.fieldname) + (typeof part.value === 'string' ? Buffer.byteLength(part.value) : 0);
        if (fieldBytes > c.config.maxBodyBytes) throw fieldsTooLargeError(c.config.maxBodyBytes);
        if (!(part.fieldname in body)) body[part.fieldname] = part.value;
        continue;
      }
      const name = part.filename || part.fieldname || 'file';
      if (files.length >= maxFilesPerRequest) throw tooManyFilesError(maxFilesPerRequest);
      let bytes: Buffer;
      try {
        bytes = await part.toBuffer();
      } catch (e) {
        if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') c.files.checkFileSize(name, maxFileBytes + 1);
        throw e;
      }
      // Browsers send an empty part for a file input left blank.
      if (!part.filename && bytes.length === 0) continue;
      total += bytes.length;
      c.files.checkRequestSize(total);
      files.push({ name, bytes });
    }
  } catch (e) {
    throw multipartError(request, e);
  }
  return { body, files };
}

/** 413 naming the limit (AGENTRY_MAX_BODY_BYTES). */
function fieldsTooLargeError(max: number): AppError {
  return new AppError('too_large', `Request too large: the text fields may total at most ${max} bytes`);
}

/** 413 naming the limit (AGENTRY_MAX_FILES_PER_REQUEST). */
export function tooManyFilesError(max: number): AppError {
  return new AppError('too_large', `Too many files: at most ${max} files per request`);
}

/**
 * What a multipart reader throws, as the caller's error: the parser (busboy) throws plain errors for a body that
 * is not multipart as declared (no boundary, truncated, malformed part headers). Those answered 500 with a stack
 * in the log (issue 20); they are a 422 on `body` and one info line. Our own refusals and the plugin's 4xx pass.
 */
export function multipartError(request: FastifyRequest, e: unknown): unknown {
  if (isAppError(e)) return e;
  const status = (e as { statusCode?: number } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return e;
  const reason = e instanceof Error ? e.message : String(e);
  request.log.info({ reason }, 'malformed multipart body');
  return AppError.validation([{ loc: ['body'], msg: 'Invalid multipart body', type: 'value_error' }]);
}
