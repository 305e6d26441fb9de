import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../../src/db/database.js';

/** The planner's plan of a query as text: SQLite's `explain query plan`, PostgreSQL's `explain` with scans of whole tables off. */
export async function queryPlan(db: Db, kind: string, q: CompiledQuery): Promise<string> {
  if (kind === 'sqlite') {
    const r = await db.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]));
    return r.rows.map((x) => x.detail).join('\n');
  }
  // An empty table would be scanned; forbid that so the planner shows whether the index is usable at all.
  return db.kysely.connection().execute(async (c) => {
    await sql`set enable_seqscan = off`.execute(c);
    const r = await c.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]));
    await sql`reset enable_seqscan`.execute(c);
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  });
}
