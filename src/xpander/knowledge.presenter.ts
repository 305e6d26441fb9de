import type { DocumentView, KnowledgeBaseView } from '../knowledge/knowledge.service.js';

/** Knowledge bases and documents as xpander's SDK parses them (`KnowledgeBase`, `KnowledgeBaseDocumentItem`). */
export function presentXpanderKb(kb: KnowledgeBaseView): Record<string, unknown> {
  return { id: kb.id, name: kb.name, description: kb.description, type: 'managed', organization_id: kb.organization_id, total_documents: kb.total_documents };
}

/**
 * `document_url` is a required string in the SDK: a document uploaded as a file (no URL) shows its file name there.
 * Status and chunk count ride along for callers that read them (the SDK ignores them).
 */
export function presentXpanderDocument(d: DocumentView): Record<string, unknown> {
  return { id: d.id, kb_id: d.kb_id, document_url: d.document_url ?? d.name, name: d.name, status: d.status, status_reason: d.status_reason, chunks_count: d.chunks_count, created_at: d.created_at };
}
