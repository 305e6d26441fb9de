import type { Container } from '../../container.js';
import { presentXpanderDocument, presentXpanderKb } from '../../xpander/knowledge.presenter.js';
import { KbAddDocumentsBody, KbCreateBody, KbDeleteDocumentsBody, KbIdParams, KbSearchQuery } from '../../xpander/xpander.schemas.js';
import type { Router } from '../router.js';

/** Bare arrays are read in pages of this size, up to MAX items. */
const PAGE = 50;
const MAX = 5_000;

/** xpander's /knowledge_bases routes (its SDK's KnowledgeBases and KnowledgeBase) over the knowledge service. */
export function xpanderKnowledgeRoutes(router: Router, c: Container): void {
  const kb = c.knowledge;
  const tags = ['xpander'];

  router.route({ method: 'GET', url: '/knowledge_bases', summary: 'All knowledge bases (xpander SDK)', tags, auth: true }, ({ principal }) =>
    all((page) => kb.list(principal.organizationId, page, PAGE)).then((items) => items.map(presentXpanderKb)),
  );
  router.route({ method: 'POST', url: '/knowledge_bases/create', summary: 'Create a knowledge base (xpander SDK)', tags, body: KbCreateBody, status: 201, auth: true }, async ({ principal, body }) =>
    presentXpanderKb(await kb.create(principal.organizationId, { name: body.name, description: body.description ?? null })),
  );
  router.route({ method: 'GET', url: '/knowledge_bases/:kb_id/details', summary: 'A knowledge base (xpander SDK)', tags, params: KbIdParams, auth: true }, async ({ principal, params }) =>
    presentXpanderKb(await kb.get(principal.organizationId, params.kb_id)),
  );
  router.route({ method: 'DELETE', url: '/knowledge_bases/:kb_id/erase', summary: 'Delete a knowledge base with its documents (xpander SDK)', tags, params: KbIdParams, auth: true }, async ({ principal, params }) => {
    await kb.delete(principal.organizationId, params.kb_id);
    return { id: params.kb_id, deleted: true };
  });
  router.route({ method: 'GET', url: '/knowledge_bases/:kb_id/list', summary: 'All documents of a knowledge base (xpander SDK)', tags, params: KbIdParams, auth: true }, ({ principal, params }) =>
    all((page) => kb.listDocuments(principal.organizationId, params.kb_id, page, PAGE)).then((items) => items.map(presentXpanderDocument)),
  );
  router.route(
    { method: 'POST', url: '/knowledge_bases/:kb_id', summary: 'Add documents by URL: [{document_url, sync}] (xpander SDK)', tags, params: KbIdParams, body: KbAddDocumentsBody, status: 201, auth: true },
    async ({ principal, params, body }) => (await kb.addUrls(principal.organizationId, params.kb_id, body.map((d) => d.document_url))).map(presentXpanderDocument),
  );
  router.route(
    { method: 'DELETE', url: '/knowledge_bases/:kb_id', summary: 'Delete documents: a JSON array of document ids (xpander SDK)', tags, params: KbIdParams, body: KbDeleteDocumentsBody, auth: true },
    async ({ principal, params, body }) => {
      await kb.deleteDocuments(principal.organizationId, params.kb_id, body);
      return { deleted: body };
    },
  );
  router.route(
    { method: 'GET', url: '/knowledge_bases/:kb_id', summary: 'Search a knowledge base (xpander SDK)', tags, params: KbIdParams, query: KbSearchQuery, auth: true },
    async ({ principal, params, query }) => (await kb.searchOne(principal.organizationId, params.kb_id, query.search_query, query.top_k)).map((h) => ({ content: h.content, score: h.score })),
  );
}

async function all<T>(read: (page: number) => Promise<{ items: T[]; total: number }>): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; out.length < MAX; page++) {
    const { items, total } = await read(page);
    out.push(...items);
    if (page * PAGE >= total || items.length === 0) break;
  }
  return out;
}
