import type { Generated } from 'kysely';

export interface MemoryTables {
  memories: {
    seq: Generated<number>;
    id: string;
    organization_id: string;
    agent_id: string;
    /** Null: an agent memory, shared by every user of the agent. */
    user_id: string | null;
    content: string;
    /** extracted (after a task) | agentic (the agent's own tool call) | api */
    source: string;
    task_id: string | null;
    /**
     * The vector (db/cosine-order.ts), null when no embedding endpoint is configured (or the call failed). libsql:
     * JSON text, which `vector_distance_cos` reads. PostgreSQL: `embedding_f4` and its `embedding_norm` (migration
     * 0028, which added them; absent on libsql); `embedding` there only on rows written before it.
     */
    embedding: string | null;
    embedding_f4: number[] | null;
    embedding_norm: number | null;
    embedding_model: string | null;
    created_at: number;
    updated_at: number;
  };
  session_summaries: {
    organization_id: string;
    task_id: string;
    /** The last run of the thread the summary covers. */
    covered_run: number;
    summary: string;
    updated_at: number;
  };
}
