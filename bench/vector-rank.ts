/**
 * The cost of the vector rankings in SQL (src/db/cosine-order.ts): memory recall and the vector half of a knowledge
 * search, in process, on a fresh database.
 *
 *   npx tsx bench/vector-rank.ts [postgres|sqlite] [counts] [dimensions]
 *
 * For each count (default `300,2000`: the memory caps' 300 of one user and the shared ones, and a large agent) one
 * agent gets that many memories and one knowledge base that many chunks, with random vectors of `dimensions`
 * (default 1,536) written through the repositories, as the service writes them. Then, after a warm-up, it times:
 * the vector ranking of the memories (MemoryRepository.vector, the recall's 10), a whole recall (MemoryService.recall
 * with an embedding provider that answers at once: lexical rank, vector rank, loads), and the vector ranking of the
 * chunks (ChunkStoreRepository.vector, the search's pool of 40). Wall time is the median of 15 runs; on a local
 * PostgreSQL, the CPU its backends spent per run is read from /proc, which moves less with a busy machine.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import { ChunkStoreRepository } from '../src/knowledge/chunk-store.repository.js';
import { MemoryRepository } from '../src/memory/memory.repository.js';
import { MemoryService } from '../src/memory/memory.service.js';
import { systemClock } from '../src/lib/clock.js';
import { openMigratedDb } from '../test/support/migrated-db.js';

const kind = (process.argv[2] ?? 'postgres') as 'sqlite' | 'postgres';
const counts = (process.argv[3] ?? '300,2000').split(',').map(Number);
const dims = Number(process.argv[4] ?? 1536);
const RUNS = 15;

let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
/** A unit vector printed as embedding endpoints print theirs (9 significant digits). */
const vector = () => {
  const v = Array.from({ length: dims }, () => random() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => Number((x / norm).toPrecision(9)));
};

/** CPU milliseconds spent so far by the backends of this database (PostgreSQL on this machine), or undefined. */
async function backendCpuMs(db: Db): Promise<number | undefined> {
  if (db.dialect !== 'postgres') return undefined;
  const pids = (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(db.kysely)).rows;
  try {
    let ticks = 0;
    for (const { pid } of pids) {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    }
    return ticks * 10; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

async function time(db: Db, label: string, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 3; i++) await run();
  const walls: number[] = [];
  const cpuBefore = await backendCpuMs(db);
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    walls.push(performance.now() - start);
  }
  const cpuAfter = await backendCpuMs(db);
  walls.sort((a, b) => a - b);
  const cpu = cpuBefore !== undefined && cpuAfter !== undefined ? `  PostgreSQL CPU ${((cpuAfter - cpuBefore) / RUNS).toFixed(0)} ms/run` : '';
  console.log(`${kind} ${label.padEnd(40)} median ${walls[RUNS >> 1]!.toFixed(1)} ms (min ${walls[0]!.toFixed(1)}, max ${walls[RUNS - 1]!.toFixed(1)})${cpu}`);
}

for (const count of counts) {
  const { db, close } = await openMigratedDb(kind);
  try {
    const memories = new MemoryRepository(db);
    const chunks = new ChunkStoreRepository(db);
    await memories.transaction(async (k) => {
      for (let i = 0; i < count; i++) {
        await memories.insert(
          { id: `m${i}`, organization_id: 'org', agent_id: 'agent', user_id: i % 3 ? 'user' : null, content: `fact number ${i} about the customer`, source: 'api', task_id: null, embedding: vector(), embedding_model: 'm', created_at: i, updated_at: i },
          k,
        );
      }
      await chunks.insert(k, 'org', 'kb', 'doc', Array.from({ length: count }, (_, ord) => ({ ord, heading: '', content: `passage ${ord}`, embedding: vector() })), 'm');
    });
    if (db.dialect === 'postgres') await sql`vacuum analyze`.execute(db.kysely);
    const query = vector();
    const service = new MemoryService(memories, { exists: async () => true }, systemClock, {
      model: 'm',
      embed: async (texts: string[]) => texts.map(() => query),
    });
    await time(db, `${count} memories: vector ranking (10)`, () => memories.vector('org', 'agent', ['user', null], 'm', query, 10));
    await time(db, `${count} memories: recall`, () => service.recall('org', 'agent', 'user', 'what does the customer want', { user: true, shared: true }));
    await time(db, `${count} chunks: vector ranking (40)`, () => chunks.vector('org', [{ kbId: 'kb', documentIds: null }], 'm', query, 40));
  } finally {
    await close();
  }
}
