/**
 * The default deployment's other requests while consoles poll filtered task lists over a large history, for one or
 * more builds side by side (src/db/list-reads.ts moved those reads off the event loop on libsql):
 *
 *   npm run build && npx tsx bench/list-polling.ts [sqlite|postgres] [finished tasks, 500000] [build dir ...]
 *
 * Each build runs as `npm start` runs it (all roles in one process) on a fresh store holding `tasks` finished tasks
 * of its organization (5% failed, no user ids). In alternating slices, a cheap API read (`GET /v1/agents/{id}`, 16
 * connections) runs alone, then while a poller asks GET /v1/tasks every 500 ms with the console's filters
 * (status=failed, then a user_id no task has: a read of the whole history), as a few open consoles would. Prints
 * each build's rate and p99 in both, and the lists' latency.
 *
 * The load is not the webhook accept: a task list first moves every accepted task still in the task inbox into
 * `tasks` (task-inbox.ts), so under a sustained accept that outruns the worker each list would index the backlog
 * accumulated since the previous one, and that cost, not the read's, would be measured (docs/decisions.md, "Reads
 * whose cost grows with the data").
 */
import { openDatabase } from '../src/db/database.js';
import { join } from 'node:path';
import { json, load, sleep, startChild, startService, type LoadResult, type Service } from './lib.js';
import { KEY, SERVICE_ENV, freshStore, setupAgent, type Store } from './service-setup.js';

const db = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const tasks = Number(process.argv[3] ?? 500_000);
const dirs = process.argv.length > 4 ? process.argv.slice(4) : ['.'];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SLICE_SEC = 3;
const CONNECTIONS = 16;

/** `tasks` finished tasks of the agent's organization, written straight to the store (the service is running). */
async function seed(store: Store, orgId: string, agentId: string): Promise<void> {
  const d = openDatabase({ url: store.env.DATABASE_URL, sqlitePath: join(store.env.AGENTRY_DATA_DIR!, 'agentry.db') });
  const now = Date.now();
  for (let i = 0; i < tasks; i += 2000) {
    const rows = Array.from({ length: Math.min(2000, tasks - i) }, (_, k) => {
      const n = i + k;
      const at = now - 86_400_000 + n;
      return {
        organization_id: orgId, id: `seed-${n}`, agent_id: agentId, agent_version: '1', status: n % 20 === 0 ? 'failed' : 'completed', source: 'webhook',
        input_text: `Summarise ticket ${n}`, input_files: '[]', title: `Summarise ticket ${n}`, result: 'The customer asks for a refund of a late order. '.repeat(4),
        disable_attachment_injection: 0, call_depth: 0, is_manually_stopped: 0, prompt_tokens: 10, completion_tokens: 20, total_tokens: 30,
        run: 1, execution_attempts: 1, max_attempts: 3, fence: 1, queued_at: at, created_at: at, updated_at: at, finished_at: at,
      };
    });
    await d.kysely.transaction().execute(async (trx) => {
      for (let k = 0; k < rows.length; k += 250) await trx.insertInto('tasks').values(rows.slice(k, k + 250) as never).execute();
    });
  }
  await d.close();
}

/** GET /v1/tasks every 500 ms with the console's filters until stopped; the lists' latencies. */
function poller(svc: Service): { stop(): Promise<number[]> } {
  const took: number[] = [];
  let on = true;
  const done = (async () => {
    for (let i = 0; on; i++) {
      const t = performance.now();
      const q = i % 2 ? 'user_id=nobody' : 'status=failed';
      const res = await fetch(`${svc.api}/v1/tasks?${q}&per_page=20`, { headers: { 'x-api-key': KEY } });
      if (!res.ok) throw new Error(`GET /v1/tasks?${q} -> ${res.status}`);
      await res.arrayBuffer();
      took.push(performance.now() - t);
      await sleep(500);
    }
  })();
  return {
    async stop() {
      on = false;
      await done;
      return took;
    },
  };
}

const llm = await startChild('instant-llm');
const builds = [];
for (const dir of dirs) {
  const store = await freshStore(db, SERVICE_ENV);
  const svc = await startService(store.env, dir);
  const agent = await setupAgent(svc, llm.url, `Polling ${dir}`);
  const { organization_id: orgId } = await json(`${svc.api}/v1/agents/${agent.id}`, { key: KEY });
  const t0 = performance.now();
  await seed(store, orgId, agent.id);
  console.log(`${dir}: ${tasks} finished tasks written in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  builds.push({ dir, store, svc, read: { url: `${svc.api}/v1/agents/${agent.id}`, headers: { 'x-api-key': KEY }, connections: CONNECTIONS } });
}
const results = builds.map(() => ({ alone: [] as LoadResult[], polled: [] as LoadResult[], lists: [] as number[] }));
for (const b of builds) await load({ ...b.read, durationSec: 2 }); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const [i, b] of builds.entries()) {
    results[i]!.alone.push(await load({ ...b.read, durationSec: SLICE_SEC }));
    const p = poller(b.svc);
    results[i]!.polled.push(await load({ ...b.read, durationSec: SLICE_SEC }));
    results[i]!.lists.push(...(await p.stop()));
  }
}
const rate = (s: LoadResult[]) => s.reduce((n, x) => n + x.requests, 0) / (s.length * SLICE_SEC);
const p99 = (s: LoadResult[]) => Math.max(...s.map((x) => x.p99));
const pct = (v: number[], q: number) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(q * v.length))]!;
for (const [i, b] of builds.entries()) {
  const r = results[i]!;
  console.log(
    `${db} ${b.dir}: GET /v1/agents/{id} alone ${rate(r.alone).toFixed(0)} req/s p99 ${p99(r.alone)} ms; with lists polled ${rate(r.polled).toFixed(0)} req/s ` +
      `(${((100 * rate(r.polled)) / rate(r.alone)).toFixed(0)}%) p99 ${p99(r.polled)} ms; lists median ${pct(r.lists, 0.5).toFixed(0)} ms, max ${Math.max(...r.lists).toFixed(0)} ms (${r.lists.length})`,
  );
}
for (const b of builds) await b.svc.stop();
llm.proc.kill();
for (const b of builds) await b.store.drop();
process.exit(0);
