import type { FastifyRequest } from 'fastify';
import type { Container } from '../container.js';
import type { IncomingFile } from '../files/files.service.js';

/**
 * Reads a multipart body: text fields become body values (the first of a repeated name counts), every file part is a
 * file whatever its field name. Sizes are enforced while streaming, so an oversized upload is refused (413, naming
 * the file) without being buffered whole. Shared by the webhook receiver and knowledge-base uploads.
 */
export async function readMultipart(request: FastifyRequest, c: Container): Promise<{ body: Record<string, unknown>; files: IncomingFile[] }> {
  const { maxFileBytes } = c.config.files;
  const body: Record<string, unknown> = {};
  const files: IncomingFile[] = [];
  let total = 0;
  for await (const part of request.parts({ limits: { fileSize: maxFileBytes } })) {
    if (part.type === 'field') {
      if (!(part.fieldname in body)) body[part.fieldname] = part.value;
      continue;
    }
    const name = part.filename || part.fieldname || 'file';
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
  return { body, files };
}
