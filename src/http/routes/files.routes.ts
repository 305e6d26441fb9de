import { z } from 'zod';
import type { Container } from '../../container.js';
import type { Router } from '../router.js';

const INLINE_KINDS = new Set(['pdf', 'png', 'jpeg', 'gif', 'webp']);

/**
 * GET /v1/files/{id}: the presigned URL given to agents. The signature is the credential (no key needed);
 * without one, the caller's API key or JWT must belong to the file's organization.
 */
export function filesRoutes(router: Router, c: Container): void {
  router.route(
    {
      method: 'GET',
      url: '/v1/files/:file_id',
      summary: 'Download an uploaded file (presigned URL or API key)',
      tags: ['files'],
      auth: false,
      params: z.object({ file_id: z.string() }),
      query: z.object({ expires: z.string().optional(), sig: z.string().optional() }),
    },
    async ({ params, query, request, reply }) => {
      let opened;
      if (query.sig !== undefined || query.expires !== undefined) {
        opened = await c.files.openSigned(params.file_id, query.expires, query.sig);
      } else {
        const apiKey = first(request.headers['x-api-key']);
        const authz = first(request.headers.authorization);
        const bearer = authz && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, '').trim() : undefined;
        const principal = await c.auth.authenticate({ apiKey, bearer });
        opened = await c.files.open(principal.organizationId, params.file_id);
      }
      const { file, bytes } = opened;
      const disposition = INLINE_KINDS.has(file.kind) ? 'inline' : 'attachment';
      return reply
        .header('content-type', file.mimeType)
        .header('content-disposition', `${disposition}; filename*=UTF-8''${encodeURIComponent(file.name)}`)
        // Uploaded content is the caller's: never let a browser run it on the API's origin (SVG can carry script).
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, max-age=3600')
        .send(bytes);
    },
  );
}

function first(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? s.trim() : undefined;
}
