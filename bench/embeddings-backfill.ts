/**
 * What migration 0028 costs on PostgreSQL: converting embeddings written as JSON text to float4 arrays.
 *
 *   npx tsx bench/embeddings-backfill.ts [rows] [dimensions]
 *
 * Migrates a fresh database up to 0028, writes `rows` memories and `rows` knowledge chunks (default 20,000 each,
 * 1,536 dimensions, chunk texts of ~1,000 characters) as the previous version wrote them, then times the migration:
 * its transaction (columns, trigger, partial index) and each table's backfill, as logged.
 */
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import type { Db } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { openMigratedDb } from '../test/support/migrated-db.js';

const rows = Number(process.argv[2] ?? 20_000);
const dims = Number(process.argv[3] ?? 1536);

let seed = 7;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const vectorText = () => JSON.stringify(Array.from({ length: dims }, () => Number(((random() - 0.5) / 20).toPrecision(9))));
const words = 'the customer asked about the refund policy for orders that arrived late and damaged goods shipping'.split(' ');
const text = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' ');

/** CPU seconds the backends of this database have spent (PostgreSQL on this machine), or undefined. */
async function backendCpu(db: Db): Promise<number | undefined> {
  const pids = (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(db.kysely)).rows;
  try {
    return pids.reduce((s, { pid }) => {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return s + (Number(f[11]) + Number(f[12])) / 100;
    }, 0);
  } catch {
    return undefined;
  }
}

const { db, close } = await openMigratedDb('postgres', { before: '0028_binary_embeddings' });
try {
  const k = db.kysely as unknown as Kysely<any>;
  for (let i = 0; i < rows; i += 200) {
    const n = Math.min(200, rows - i);
    await k
      .insertInto('memories')
      .values(Array.from({ length: n }, (_, j) => ({ id: `m${i + j}`, organization_id: 'org', agent_id: 'agent', user_id: `u${(i + j) % 100}`, content: text(20), source: 'api', task_id: null, embedding: vectorText(), embedding_model: 'm', created_at: i + j, updated_at: i + j })))
      .execute();
    await k
      .insertInto('kb_chunks')
      .values(Array.from({ length: n }, (_, j) => ({ organization_id: 'org', kb_id: 'kb', document_id: `d${(i + j) >> 6}`, ord: i + j, heading: 'Policies > Refunds', content: text(170), embedding: vectorText(), embedding_model: 'm' })))
      .execute();
  }
  await sql`vacuum analyze`.execute(db.kysely);
  const size = async (t: string) => (await sql<{ s: string }>`select pg_size_pretty(pg_total_relation_size(${t})) as s`.execute(k)).rows[0]!.s;
  console.log(`${rows} memories (${await size('memories')}) and ${rows} chunks (${await size('kb_chunks')}) of ${dims} dimensions as JSON text`);
  const backfills: { table: string; rows: number; duration_ms: number }[] = [];
  const cpuBefore = await backendCpu(db);
  const started = performance.now();
  await migrate(db, { log: { info: (f) => backfills.push(f as (typeof backfills)[number]) } });
  const total = performance.now() - started;
  const cpuAfter = await backendCpu(db);
  if (cpuBefore !== undefined && cpuAfter !== undefined) {
    console.log(`PostgreSQL CPU: ${(cpuAfter - cpuBefore).toFixed(1)} s (${(((cpuAfter - cpuBefore) / (2 * rows)) * 100_000).toFixed(0)} s per 100,000 rows)`);
  }
  const converting = backfills.reduce((ms, b) => ms + b.duration_ms, 0);
  console.log(`migration 0028: ${(total / 1000).toFixed(1)} s, of which the transaction (columns, trigger, partial index) ${((total - converting) / 1000).toFixed(1)} s`);
  for (const b of backfills) {
    console.log(`  backfill of ${b.table}: ${b.rows} rows in ${(b.duration_ms / 1000).toFixed(1)} s (${((b.duration_ms / b.rows) * 100).toFixed(0)} s per 100,000 rows)`);
  }
  console.log(`after: memories ${await size('memories')}, chunks ${await size('kb_chunks')}`);
} finally {
  await close();
}
