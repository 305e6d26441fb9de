import { AppError } from '../errors.js';
import { deadlineSignal } from '../lib/abort.js';
import { isoOrNull, isoTime, type Clock } from '../lib/clock.js';
import { newId, UUID_RE } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { ReleasedBlob } from '../files/file-lifetime.repository.js';
import type { FilesService, IncomingFile } from '../files/files.service.js';
import type { ChunkStoreRepository } from './chunk-store.repository.js';
import type { DocumentReader } from './document-reader.js';
import type { EmbeddingProvider } from './embeddings.js';
import type { JobQueueRepository } from './job-queue.repository.js';
import type { DocumentRow, DocumentSummary, KbRow, KnowledgeRepository } from './knowledge.repository.js';
import { fuse, queryTerms } from './ranking.js';
import { validScopes, type SearchScope } from './search-scope.js';

/** The job kind that indexes one document. */
export const INDEX_JOB = 'kb_index';
/** Claims of an indexing job before the document ends `error` (a worker died, or transient failures). */
export const INDEX_MAX_ATTEMPTS = 3;
/** How long a search waits for its query's vector before answering lexically (memory recall waits as long). */
const QUERY_EMBED_TIMEOUT_MS = 10_000;

export interface KnowledgeBaseView {
  id: string;
  name: string;
  description: string | null;
  type: string;
  organization_id: string;
  agent_id: string | null;
  total_documents: number;
  created_at: string;
  updated_at: string;
}

export interface DocumentView {
  id: string;
  kb_id: string;
  organization_id: string;
  name: string;
  document_url: string | null;
  source: string;
  mime_type: string | null;
  status: string;
  status_reason: string | null;
  chunks_count: number;
  created_at: string;
  updated_at: string;
  indexed_at: string | null;
  raw_data?: string | null;
}

export interface SearchHit {
  content: string;
  score: number;
  document_id: string;
  document_name: string;
  kb_id: string;
  heading: string;
}

export interface KnowledgePorts {
  /** Called after a job is committed, so indexers (this process's, and others' through notifications) start at once. */
  onEnqueued: () => void;
  /** The agents domain's answer to "does this agent exist in the organization" (for `agent_id` on PATCH). */
  agentExists: (organizationId: string, agentId: string) => Promise<boolean>;
  /**
   * Removes the blobs of deleted documents' files once the delete has committed (src/files/file-disposal.ts). Never
   * throws: a blob it cannot remove stays recorded and the worker role's file sweep retries it.
   */
  removeBlobs: (released: readonly ReleasedBlob[]) => Promise<unknown>;
}

/**
 * Knowledge bases and their documents (docs/contract.md#knowledge): CRUD, adding documents (URLs fetched later by the
 * indexer; uploads extracted at once), and hybrid search. Adding a document commits the document and its
 * indexing job together, so nothing is ever queued for a document that does not exist, or the reverse. Deleting one
 * deletes its uploaded file's row in the same transaction and its blob after the commit, as a task's uploads go.
 */
export class KnowledgeService {
  constructor(
    private readonly repo: KnowledgeRepository,
    private readonly chunks: ChunkStoreRepository,
    private readonly jobs: JobQueueRepository,
    private readonly files: FilesService,
    private readonly reader: DocumentReader,
    private readonly embeddings: EmbeddingProvider | undefined,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly ports: KnowledgePorts,
  ) {}

  /** KnowledgeBaseLookup for the agents domain. */
  async exists(organizationId: string, id: string): Promise<boolean> {
    return UUID_RE.test(id) && (await this.repo.existingKbIds(organizationId, [id])).has(id);
  }

  async create(org: string, input: { name: string; description?: string | null }): Promise<KnowledgeBaseView> {
    const now = this.clock.now();
    const row: KbRow = { id: newId(), organization_id: org, name: input.name, description: input.description ?? null, type: 'managed', agent_id: null, created_at: now, updated_at: now };
    await this.repo.insertKb(row);
    return this.presentKb(row, 0);
  }

  async list(org: string, page: number, perPage: number): Promise<{ items: KnowledgeBaseView[]; total: number }> {
    const { rows, total } = await this.repo.listKbs(org, (page - 1) * perPage, perPage);
    const counts = await this.repo.readyCounts(org, rows.map((r) => r.id));
    return { items: rows.map((r) => this.presentKb(r, counts.get(r.id) ?? 0)), total };
  }

  async get(org: string, id: string): Promise<KnowledgeBaseView> {
    const row = await this.requireKb(org, id);
    return this.presentKb(row, (await this.repo.readyCounts(org, [id])).get(id) ?? 0);
  }

  async update(org: string, id: string, patch: { name?: string; description?: string | null; agent_id?: string | null }): Promise<KnowledgeBaseView> {
    await this.requireKb(org, id);
    if (patch.agent_id && !(await this.ports.agentExists(org, patch.agent_id))) {
      throw AppError.invalid(['body', 'agent_id'], `agent '${patch.agent_id}' not found`);
    }
    const row = await this.repo.updateKb(org, id, patch, this.clock.now());
    if (!row) throw AppError.notFound('Knowledge base');
    return this.presentKb(row, (await this.repo.readyCounts(org, [id])).get(id) ?? 0);
  }

  /**
   * Removes the knowledge base with its documents, chunks, pending jobs and uploaded files, in one transaction (the
   * files' blobs are recorded in it and removed after the commit): a crash at any point leaves nothing no sweep finds.
   */
  async delete(org: string, id: string): Promise<void> {
    await this.requireKb(org, id);
    const released = await this.repo.transaction(async (k) => {
      const docs = await this.repo.deleteKb(k, org, id);
      await this.jobs.deleteForRefs(k, org, docs.map((d) => d.id));
      await this.chunks.deleteForKb(k, org, id);
      return this.repo.releaseFiles(k, org, docs, this.clock.now());
    });
    await this.ports.removeBlobs(released);
  }

  async addUrls(org: string, kbId: string, urls: string[]): Promise<DocumentView[]> {
    await this.requireKb(org, kbId);
    const now = this.clock.now();
    const rows = urls.map((url) => this.newDocument(org, kbId, { name: url, source: 'url', document_url: url, raw_text: null, mime_type: null, file_id: null }, now));
    return this.commitDocuments(org, kbId, rows, now);
  }

  /**
   * Uploads: checked and extracted before anything is stored (413/415 naming the file), then stored under the ids their
   * documents will have, then the documents committed with their jobs. A refused commit discards the files; a process
   * that dies before it leaves files whose documents do not exist, which the file sweep deletes after its grace.
   */
  async addFiles(org: string, kbId: string, files: IncomingFile[]): Promise<DocumentView[]> {
    await this.requireKb(org, kbId);
    if (!files.length) throw AppError.invalid(['body', 'files'], 'at least one file is required');
    const prepared = await this.reader.prepareUploads(org, files);
    const documentIds = prepared.map(() => newId());
    const stored = await this.files.store(org, prepared, { documentIds });
    const now = this.clock.now();
    const rows = stored.map((f, i) => ({
      ...this.newDocument(org, kbId, { name: f.name, source: 'file', document_url: null, raw_text: prepared[i]!.text, mime_type: f.mimeType, file_id: f.id }, now),
      id: documentIds[i]!,
    }));
    try {
      return await this.commitDocuments(org, kbId, rows, now);
    } catch (e) {
      await this.files.discard(org, stored);
      throw e;
    }
  }

  /** A document written by an agent (the `rw` tool): its text is given, so only chunking and embedding remain. */
  async addText(org: string, kbId: string, name: string, text: string): Promise<DocumentView> {
    await this.requireKb(org, kbId);
    const now = this.clock.now();
    const row = this.newDocument(org, kbId, { name, source: 'agent', document_url: null, raw_text: text, mime_type: 'text/markdown', file_id: null }, now);
    return (await this.commitDocuments(org, kbId, [row], now))[0]!;
  }

  async listDocuments(org: string, kbId: string, page: number, perPage: number): Promise<{ items: DocumentView[]; total: number }> {
    await this.requireKb(org, kbId);
    const { rows, total } = await this.repo.listDocuments(org, kbId, (page - 1) * perPage, perPage);
    return { items: rows.map((r) => this.presentDocument(r)), total };
  }

  async getDocument(org: string, kbId: string, id: string): Promise<DocumentView> {
    const row = await this.requireDocument(org, kbId, id);
    return { ...this.presentDocument(row), raw_data: row.raw_text };
  }

  async deleteDocument(org: string, kbId: string, id: string): Promise<void> {
    await this.deleteDocuments(org, kbId, [id]);
  }

  /**
   * Several documents at once (xpander's DELETE /knowledge_bases/{id}): all are checked first (in slices, not one
   * query each), so a missing one deletes none. Their files go in the same transaction, as in `delete`.
   */
  async deleteDocuments(org: string, kbId: string, ids: string[]): Promise<void> {
    await this.requireKb(org, kbId);
    const docIds = [...new Set(ids)];
    if ((await this.missingDocuments(org, kbId, docIds)).length) throw AppError.notFound('Document');
    const released = await this.repo.transaction(async (k) => {
      const docs = await this.repo.deleteDocuments(k, org, kbId, docIds);
      await this.jobs.deleteForRefs(k, org, docIds);
      await this.chunks.deleteForDocuments(k, org, docIds);
      return this.repo.releaseFiles(k, org, docs, this.clock.now());
    });
    await this.ports.removeBlobs(released);
  }

  /** `GET /v1/knowledge/{kb_id}/search`: 404 for a knowledge base the organization does not have. */
  async searchOne(org: string, kbId: string, query: string, topK: number): Promise<SearchHit[]> {
    await this.requireKb(org, kbId);
    return this.search(org, [{ kbId, documentIds: null }], query, topK);
  }

  /**
   * The ids among `ids` that are not documents of knowledge base `kbId` in the organization (an agent's
   * `knowledge_bases[].documents` is checked with it): another organization's document is as unknown as a made-up id.
   */
  async missingDocuments(org: string, kbId: string, ids: string[]): Promise<string[]> {
    const candidates = [...new Set(ids.filter((id) => UUID_RE.test(id)))];
    const found = UUID_RE.test(kbId) && candidates.length ? await this.repo.existingDocumentIds(org, kbId, candidates) : new Set<string>();
    return ids.filter((id) => !found.has(id));
  }

  /**
   * Hybrid retrieval within the given scopes (whole knowledge bases, or chosen documents of them): lexical always,
   * vectors when an embedding provider is configured, fused by reciprocal rank. A failing embedding call costs only
   * the vector half.
   */
  async search(org: string, scopes: SearchScope[], query: string, topK: number, signal?: AbortSignal): Promise<SearchHit[]> {
    const scoped = validScopes(scopes).filter((s) => s.documentIds === null || s.documentIds.length > 0);
    if (!scoped.length || !query.trim()) return [];
    const pool = Math.max(topK * 4, 40);
    const lists = [(await this.chunks.lexical(org, scoped, queryTerms(query), pool)).map((seq) => ({ seq }))];
    if (this.embeddings) {
      try {
        // No retries and a short deadline: a search waits for no endpoint; it answers lexically instead.
        const deadline = deadlineSignal(signal, QUERY_EMBED_TIMEOUT_MS);
        let vector: number[] | undefined;
        try {
          [vector] = await this.embeddings.embed([query], deadline.signal, 0);
        } finally {
          deadline.release();
        }
        lists.push((await this.chunks.vector(org, scoped, this.embeddings.model, vector!, pool)).map((seq) => ({ seq })));
      } catch (e) {
        if (signal?.aborted) throw e;
        this.log.warn({ err: e }, 'query embedding failed; knowledge search continues lexically');
      }
    }
    const fused = fuse(lists, topK);
    const hits = new Map((await this.chunks.load(org, fused.map((f) => f.seq))).map((h) => [h.seq, h]));
    return fused.flatMap((f) => {
      const h = hits.get(f.seq);
      return h ? [{ content: h.content, score: f.score, document_id: h.documentId, document_name: h.documentName, kb_id: h.kbId, heading: h.heading }] : [];
    });
  }

  private newDocument(org: string, kbId: string, f: Pick<DocumentRow, 'name' | 'source' | 'document_url' | 'raw_text' | 'mime_type' | 'file_id'>, now: number): DocumentRow {
    return { id: newId(), organization_id: org, kb_id: kbId, ...f, status: 'queued', status_reason: null, chunks_count: 0, created_at: now, updated_at: now, indexed_at: null };
  }

  /** 404 when the knowledge base was deleted since it was checked: no document is ever left in a deleted one. */
  private async commitDocuments(org: string, kbId: string, rows: DocumentRow[], now: number): Promise<DocumentView[]> {
    await this.repo.transaction(async (k) => {
      if (!(await this.repo.lockKb(k, org, kbId))) throw AppError.notFound('Knowledge base');
      await this.repo.insertDocuments(k, rows);
      for (const r of rows) await this.jobs.enqueue(k, { organizationId: org, kind: INDEX_JOB, refId: r.id, maxAttempts: INDEX_MAX_ATTEMPTS }, now);
    });
    this.ports.onEnqueued();
    return rows.map((r) => this.presentDocument(r));
  }

  private async requireKb(org: string, id: string): Promise<KbRow> {
    const row = UUID_RE.test(id) ? await this.repo.findKb(org, id) : undefined;
    if (!row) throw AppError.notFound('Knowledge base');
    return row;
  }

  private async requireDocument(org: string, kbId: string, id: string): Promise<DocumentRow> {
    await this.requireKb(org, kbId);
    const row = UUID_RE.test(id) ? await this.repo.findDocument(org, kbId, id) : undefined;
    if (!row) throw AppError.notFound('Document');
    return row;
  }

  private presentKb(r: KbRow, ready: number): KnowledgeBaseView {
    return {
      id: r.id,
      name: r.name,
      description: r.description,
      type: r.type,
      organization_id: r.organization_id,
      agent_id: r.agent_id,
      total_documents: ready,
      created_at: isoTime(Number(r.created_at)),
      updated_at: isoTime(Number(r.updated_at)),
    };
  }

  private presentDocument(r: DocumentSummary): DocumentView {
    const url = r.document_url ?? (r.file_id ? this.files.presignedUrl(r.organization_id, r.file_id, Number(r.created_at)) : null);
    return {
      id: r.id,
      kb_id: r.kb_id,
      organization_id: r.organization_id,
      name: r.name,
      document_url: url,
      source: r.source,
      mime_type: r.mime_type,
      status: r.status,
      status_reason: r.status_reason,
      chunks_count: Number(r.chunks_count),
      created_at: isoTime(Number(r.created_at)),
      updated_at: isoTime(Number(r.updated_at)),
      indexed_at: isoOrNull(r.indexed_at),
    };
  }
}
