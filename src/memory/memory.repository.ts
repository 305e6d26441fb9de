import { sql, type Kysely } from 'kysely';
import { serialiseOn } from '../db/advisory-lock.js';
import { cosineOrder, hasEmbedding, pgEmbeddingColumns } from '../db/cosine-order.js';
import type { Db } from '../db/database.js';
import { rawRead } from '../db/list-reads.js';
import type { Database } from '../db/schema.js';

/** A memory's vector and the model that made it: both null when there is none. */
export interface Embedded {
  embedding: number[] | null;
  embedding_model: string | null;
}

/** The vector's columns, stored per dialect (memory.tables.ts) and read only by the ranking in SQL. */
type VectorColumns = 'embedding' | 'embedding_f4' | 'embedding_norm' | 'embedding_model';

/** A memory as read: every column but the vector's. */
export type MemoryRow = Omit<Database['memories'], 'seq' | VectorColumns> & { seq: number };

/** A memory as inserted: the table's columns but the generated `seq`, with its vector. */
export type NewMemory = Omit<Database['memories'], 'seq' | VectorColumns> & Embedded;

const READ_COLUMNS = ['seq', 'id', 'organization_id', 'agent_id', 'user_id', 'content', 'source', 'task_id', 'created_at', 'updated_at'] as const;

/** Which memories a list or a count covers; `userId` null selects the agent's shared memories. */
export interface MemoryFilter {
  agentId?: string;
  userId?: string | null;
  /** Only memories about users (user_id set). */
  usersOnly?: boolean;
}

/** SQL of memories and session summaries; every query filters by organization. */
export class MemoryRepository {
  constructor(private readonly db: Db) {}

  private scoped(k: Kysely<Database>, org: string, f: MemoryFilter) {
    let q = k.selectFrom('memories').where('organization_id', '=', org);
    if (f.agentId !== undefined) q = q.where('agent_id', '=', f.agentId);
    if (f.userId === null) q = q.where('user_id', 'is', null);
    else if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
    else if (f.usersOnly) q = q.where('user_id', 'is not', null);
    return q;
  }

  async list(org: string, f: MemoryFilter, offset: number, limit: number): Promise<MemoryRow[]> {
    const rows = await this.scoped(this.db.kysely, org, f).select(READ_COLUMNS).orderBy('updated_at', 'desc').orderBy('seq', 'desc').offset(offset).limit(limit).execute();
    return rows.map(norm);
  }

  async count(org: string, f: MemoryFilter, k: Kysely<Database> = this.db.kysely): Promise<number> {
    const r = await this.scoped(k, org, f).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async find(org: string, id: string, k: Kysely<Database> = this.db.kysely): Promise<MemoryRow | undefined> {
    const r = await k.selectFrom('memories').select(READ_COLUMNS).where('organization_id', '=', org).where('id', '=', id).executeTakeFirst();
    return r && norm(r);
  }

  async findMany(org: string, ids: string[]): Promise<MemoryRow[]> {
    if (!ids.length) return [];
    const rows = await this.db.kysely.selectFrom('memories').select(READ_COLUMNS).where('organization_id', '=', org).where('id', 'in', ids).execute();
    return rows.map(norm);
  }

  async insert(m: NewMemory, k: Kysely<Database> = this.db.kysely): Promise<void> {
    const { embedding, embedding_model, ...rest } = m;
    await k.insertInto('memories').values({ ...rest, ...this.vectorColumns(embedding), embedding_model }).execute();
  }

  async update(org: string, id: string, content: string, e: Embedded, now: number, k: Kysely<Database> = this.db.kysely): Promise<boolean> {
    const r = await k
      .updateTable('memories')
      .set({ content, ...this.vectorColumns(e.embedding), embedding_model: e.embedding_model, updated_at: now })
      .where('organization_id', '=', org)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * libsql: JSON text, which vector_distance_cos reads. PostgreSQL: a float4 array and its norm, and the text of a
   * row written before migration 0028 cleared (db/cosine-order.ts).
   */
  private vectorColumns(v: number[] | null) {
    return this.db.dialect === 'postgres' ? pgEmbeddingColumns(v) : { embedding: v && JSON.stringify(v) };
  }

  async delete(org: string, id: string, k: Kysely<Database> = this.db.kysely): Promise<boolean> {
    const r = await k.deleteFrom('memories').where('organization_id', '=', org).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Orders concurrent writers of one owner's memories, so the per-owner cap counted inside a transaction holds. */
  lockOwner(k: Kysely<Database>, org: string, agentId: string, userId: string | null): Promise<void> {
    return serialiseOn(this.db, k, `memories:${org}:${agentId}:${userId ?? ''}`);
  }

  /** Runs `fn` in one transaction: a batch of changes from one extraction lands whole or not at all. */
  transaction<T>(fn: (k: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.kysely.transaction().execute(fn);
  }

  /**
   * Ids of the agent's memories for these owners (a user id, and/or null for the shared ones) in lexical rank
   * order; any term may match (OR). FTS5 bm25 on libsql, tsvector + ts_rank on PostgreSQL, as knowledge chunks.
   */
  async lexical(org: string, agentId: string, owners: (string | null)[], terms: string[], limit: number): Promise<string[]> {
    if (!owners.length || !terms.length) return [];
    const k = this.db.kysely;
    const ownerSql = ownedBy(owners);
    if (this.db.dialect === 'postgres') {
      const r = await sql<{ id: string }>`
        select m.id from memories m, to_tsquery('english', ${terms.join(' | ')}) q
        where m.organization_id = ${org} and m.agent_id = ${agentId} and (${ownerSql}) and m.tsv @@ q
        order by ts_rank(m.tsv, q) desc, m.seq desc
        limit ${limit}`.execute(k);
      return r.rows.map((x) => x.id);
    }
    const match = terms.map((t) => `"${t}"`).join(' OR ');
    const r = await sql<{ id: string }>`
      select m.id from memories_fts f join memories m on m.seq = f.rowid
      where memories_fts match ${match} and m.organization_id = ${org} and m.agent_id = ${agentId} and (${ownerSql})
      order by bm25(memories_fts), m.seq desc
      limit ${limit}`.execute(k);
    return r.rows.map((x) => x.id);
  }

  /**
   * Ids of the agent's memories for these owners by cosine similarity to `query`, among those embedded by `model`,
   * equal similarities newest first (as `lexical`). Every memory in scope is compared, in the database and off the
   * event loop (db/cosine-order.ts).
   */
  async vector(org: string, agentId: string, owners: (string | null)[], model: string, query: number[], limit: number): Promise<string[]> {
    if (!owners.length) return [];
    const ranking = sql<{ id: string }>`
      select m.id from memories m
      where m.organization_id = ${org} and m.agent_id = ${agentId} and (${ownedBy(owners)})
        and m.embedding_model = ${model} and ${hasEmbedding(this.db, 'm')}
      order by ${await cosineOrder(this.db, 'm', query)}, m.seq desc
      limit ${limit}`;
    return (await this.db.lists.all(org, rawRead(this.db.kysely, ranking))).map((r) => r.id);
  }

  async summary(org: string, taskId: string): Promise<{ coveredRun: number; summary: string } | undefined> {
    const r = await this.db.kysely
      .selectFrom('session_summaries')
      .select(['covered_run', 'summary'])
      .where('organization_id', '=', org)
      .where('task_id', '=', taskId)
      .executeTakeFirst();
    return r && { coveredRun: Number(r.covered_run), summary: r.summary };
  }

  /** Keeps the summary that covers more runs: two runs of one thread never move it backwards. */
  async putSummary(org: string, taskId: string, coveredRun: number, summary: string, now: number): Promise<void> {
    await this.db.kysely
      .insertInto('session_summaries')
      .values({ organization_id: org, task_id: taskId, covered_run: coveredRun, summary, updated_at: now })
      .onConflict((oc) =>
        oc
          .columns(['organization_id', 'task_id'])
          .doUpdateSet({ covered_run: coveredRun, summary, updated_at: now })
          .where('session_summaries.covered_run', '<', coveredRun),
      )
      .execute();
  }
}

/** `m.user_id` is one of these owners (a user id, or null for the agent's shared memories). */
function ownedBy(owners: (string | null)[]) {
  const users = owners.filter((o): o is string => o !== null);
  return sql.join(
    [...(owners.includes(null) ? [sql`m.user_id is null`] : []), ...(users.length ? [sql`m.user_id in (${sql.join(users)})`] : [])],
    sql` or `,
  );
}

function norm(r: MemoryRow): MemoryRow {
  return { ...r, seq: Number(r.seq), created_at: Number(r.created_at), updated_at: Number(r.updated_at) } as MemoryRow;
}
