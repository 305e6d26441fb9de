import type { Generated } from 'kysely';

/** The knowledge domain's tables (migration 0007). */
export interface KnowledgeTables {
  knowledge_bases: {
    id: string;
    organization_id: string;
    name: string;
    description: string | null;
    /** Always 'managed': this service stores and searches the documents itself. */
    type: string;
    agent_id: string | null;
    created_at: number;
    updated_at: number;
  };
  kb_documents: {
    id: string;
    organization_id: string;
    kb_id: string;
    name: string;
    /** 'url' (fetched by the indexer), 'file' (uploaded) or 'agent' (written by an agent's tool). */
    source: string;
    document_url: string | null;
    /** The stored upload (files domain), when source is 'file'. */
    file_id: string | null;
    mime_type: string | null;
    /** queued | indexing | ready | error */
    status: string;
    /** Why the document is in `error`. */
    status_reason: string | null;
    /** The extracted text: given at upload, or filled by the indexer after fetching the URL. */
    raw_text: string | null;
    chunks_count: number;
    created_at: number;
    updated_at: number;
    indexed_at: number | null;
  };
  kb_chunks: {
    seq: Generated<number>;
    organization_id: string;
    kb_id: string;
    document_id: string;
    /** Position of the chunk in its document. */
    ord: number;
    /** Heading path of the section the chunk comes from ("Article I > Section 3"); '' when none. */
    heading: string;
    content: string;
    /**
     * The vector (db/cosine-order.ts), null when no embedding provider is set. libsql: float32 vector blob.
     * PostgreSQL: `embedding_f4` and its `embedding_norm` (migration 0028, which added them; absent on libsql);
     * `embedding` there, pgvector's text form, only on rows written before it.
     */
    embedding: Uint8Array | string | null;
    embedding_f4: number[] | null;
    embedding_norm: number | null;
    /** Which model produced the embedding: only vectors of the current model are compared. */
    embedding_model: string | null;
  };
  jobs: {
    id: string;
    organization_id: string;
    /** What to do, e.g. 'kb_index'; `ref_id` names the object it works on. */
    kind: string;
    ref_id: string;
    /** queued | running | done | error */
    status: string;
    /** Claims so far; a job whose workers keep dying ends `error` at max_attempts. */
    attempts: number;
    max_attempts: number;
    /** Fencing token: increases on every claim; every worker write checks it. */
    fence: number;
    lease_owner: string | null;
    lease_expires_at: number | null;
    heartbeat_at: number | null;
    /** Earliest claim time (retry back-off) and queue order. */
    run_after: number;
    last_error: string | null;
    created_at: number;
    updated_at: number;
  };
}
