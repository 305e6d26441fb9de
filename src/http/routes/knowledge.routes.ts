import { z } from 'zod';
import type { Container } from '../../container.js';
import { AppError } from '../../errors.js';
import { AddDocumentsBody, DocumentParams, KbCreateBody, KbParams, KbUpdateBody, SearchQuery } from '../../knowledge/knowledge.schemas.js';
import { readMultipart } from '../multipart.js';
import { pageOf, PageQuery, type Router } from '../router.js';

/** The multipart form of POST .../documents, for the OpenAPI document: every file part is a document. */
const DocumentUploadMultipart = z.object({
  files: z.array(z.string().meta({ format: 'binary' })).describe('Documents to index (PDF, DOCX, TXT, CSV, XLSX, HTML, images with OCR, ZIP ...): every file part counts, whatever its field name.'),
});

/** Knowledge bases, their documents and search (docs/contract.md#knowledge). */
export function knowledgeRoutes(router: Router, c: Container): void {
  const tags = ['knowledge'];

  router.route({ method: 'GET', url: '/v1/knowledge', summary: 'List knowledge bases', tags, query: PageQuery }, async ({ principal, query }) => {
    const { items, total } = await c.knowledge.list(principal.organizationId, query.page, query.per_page);
    return pageOf(items, total, query.page, query.per_page);
  });

  router.route({ method: 'POST', url: '/v1/knowledge', summary: 'Create a knowledge base', tags, body: KbCreateBody, status: 201 }, ({ principal, body }) =>
    c.knowledge.create(principal.organizationId, body),
  );

  router.route({ method: 'GET', url: '/v1/knowledge/:kb_id', summary: 'Get a knowledge base', tags, params: KbParams }, ({ principal, params }) =>
    c.knowledge.get(principal.organizationId, params.kb_id),
  );

  router.route(
    { method: 'PATCH', url: '/v1/knowledge/:kb_id', summary: 'Update a knowledge base', tags, params: KbParams, body: KbUpdateBody },
    ({ principal, params, body }) => c.knowledge.update(principal.organizationId, params.kb_id, body),
  );

  router.route(
    { method: 'DELETE', url: '/v1/knowledge/:kb_id', summary: 'Delete a knowledge base with its documents', tags, params: KbParams, status: 202 },
    async ({ principal, params }) => {
      await c.knowledge.delete(principal.organizationId, params.kb_id);
      return null;
    },
  );

  router.route(
    {
      method: 'POST',
      url: '/v1/knowledge/:kb_id/documents',
      summary: 'Add documents: JSON {document_urls} (fetched under the egress policy) or multipart files',
      tags,
      params: KbParams,
      // Optional only because a multipart body reaches the handler as no body: JSON is validated here as usual.
      body: AddDocumentsBody.optional(),
      bodyDocs: { 'multipart/form-data': DocumentUploadMultipart },
      status: 201,
    },
    async ({ principal, params, body, request }) => {
      if (request.isMultipart()) return c.knowledge.addFiles(principal.organizationId, params.kb_id, (await readMultipart(request, c)).files);
      if (!body) throw AppError.validation([{ loc: ['body', 'document_urls'], msg: 'Field required', type: 'missing' }]);
      return c.knowledge.addUrls(principal.organizationId, params.kb_id, body.document_urls);
    },
  );

  router.route(
    { method: 'GET', url: '/v1/knowledge/:kb_id/documents', summary: 'List the documents of a knowledge base', tags, params: KbParams, query: PageQuery },
    async ({ principal, params, query }) => {
      const { items, total } = await c.knowledge.listDocuments(principal.organizationId, params.kb_id, query.page, query.per_page);
      return pageOf(items, total, query.page, query.per_page);
    },
  );

  router.route(
    { method: 'GET', url: '/v1/knowledge/:kb_id/documents/:document_id', summary: 'Get a document with its status and text', tags, params: DocumentParams },
    ({ principal, params }) => c.knowledge.getDocument(principal.organizationId, params.kb_id, params.document_id),
  );

  router.route(
    { method: 'DELETE', url: '/v1/knowledge/:kb_id/documents/:document_id', summary: 'Delete a document', tags, params: DocumentParams, status: 202 },
    async ({ principal, params }) => {
      await c.knowledge.deleteDocument(principal.organizationId, params.kb_id, params.document_id);
      return null;
    },
  );

  router.route(
    { method: 'GET', url: '/v1/knowledge/:kb_id/search', summary: 'Search a knowledge base (hybrid lexical + vector)', tags, params: KbParams, query: SearchQuery },
    async ({ principal, params, query }) => {
      const hits = await c.knowledge.searchOne(principal.organizationId, params.kb_id, query.search_query, query.top_k);
      return hits.map((h) => ({ content: h.content, score: h.score, document_id: h.document_id }));
    },
  );
}
