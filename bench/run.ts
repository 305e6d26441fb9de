/**
 * `npm run bench`: every scenario of bench/README.md on the embedded database, then on PostgreSQL, each next to
 * a bare node:http server answering the same route shape with a constant (the ceiling on this machine), in one
 * run. Prints a Markdown report and writes it to bench/results/latest.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgDatabase } from '../test/support/databases.js';
import { interleaved, json, latency, load, memoryOf, sleep, startChild, startService, type Child, type LatencyResult, type LoadResult, type Service } from './lib.js';
import { countTasks, freshStore, KEY, SERVICE_ENV, setupAgent, type Store } from './service-setup.js';
import { defaultDeployment, type ReportRow } from './default-deployment.js';
import { peerComparison } from './peers.js';

const DURATION = Number(process.env.BENCH_DURATION_SEC ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 4000);
/** The one-worker rate is taken over at most this many of the tasks the accept scenario left. */
const DRAIN_MAX = Number(process.env.BENCH_DRAIN_MAX ?? 20_000);
/**
 * Seconds of the same requests, not counted, before a measured service scenario: the first few hundred calls of a
 * fresh process run code the JIT has not compiled yet. Targets are about a running service, not its first second.
 */
const WARMUP = Number(process.env.BENCH_WARMUP_SEC ?? 2);
/**
 * Concurrencies of the accept scenario. A durable accept's throughput is bounded by its concurrency: every call waits
 * for a commit, and the calls that arrive during one commit share the next (see docs/benchmarks.md, "The asynchronous accept").
 */
const ACCEPT_CONNECTIONS = [...new Set((process.env.BENCH_ACCEPT_CONNECTIONS ?? `${CONNECTIONS},64`).split(',').map(Number))];
/** Interleaved slices per measured load in the accept scenario (lib.ts interleaved()). */
const ROUNDS = 4;
/** How often the drain's progress is counted. */
const DRAIN_POLL_MS = 500;
/** Which scenarios run (all by default): a profile or an A/B comparison usually needs one alone. */
const SCENARIO_NAMES = ['create', 'accept', 'schema', 'drain', 'sync', 'default', 'peers'] as const;
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? SCENARIO_NAMES.join(',')).split(',').map((s) => s.trim()));
for (const s of SCENARIOS) if (!(SCENARIO_NAMES as readonly string[]).includes(s)) throw new Error(`BENCH_SCENARIOS: unknown scenario "${s}" (known: ${SCENARIO_NAMES.join(', ')})`);
// One worker drains the backlog the accept scenario leaves.
if (SCENARIOS.has('drain') && !SCENARIOS.has('accept')) throw new Error('BENCH_SCENARIOS: "drain" needs "accept", whose backlog it drains');
const want = (s: (typeof SCENARIO_NAMES)[number]): boolean => SCENARIOS.has(s);
/** Scenario 6: the scripted LLM's answer delay (a real provider takes about a second), and the backlog it grows to. */
const LLM_DELAY_MS = Number(process.env.BENCH_LLM_DELAY_MS ?? 1000);
const BIG_BACKLOG = Number(process.env.BENCH_BIG_BACKLOG ?? 100_000);
const CORPUS = new URL('../../shared/openapi-corpus/', import.meta.url).pathname;
const LARGEST = 'kubernetes__swagger.json';

const rows: ReportRow[] = [];
const extras: string[] = [];

/** A sequential latency run as a row of the report (its throughput is requests over the duration). */
function asLoad(r: LatencyResult, durationSec: number): LoadResult {
  return { rps: r.requests / durationSec, p50: r.p50, p99: r.p99, errors: r.failures, non2xx: 0, requests: r.requests, statuses: {} };
}

function fmt(r: LoadResult): string {
  return `${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`;
}

/**
 * Waits until `n` tasks of the agent are completed; returns tasks per second in the steady part of the drain: from
 * the first count at or above 10% of `n` to the first at or above 90%. Starting the worker processes (a second or
 * two, and a fixed wait for a process without an HTTP port) and the last slow-draining tasks are not timed: with a
 * backlog of a few thousand tasks they would be a third of the time, and more of it the more workers start.
 */
async function drain(svc: Service, agentId: string, n: number): Promise<number> {
  const deadline = Date.now() + 600_000;
  let from: { done: number; at: number } | undefined;
  for (;;) {
    const done = await countTasks(svc, agentId, 'completed');
    const at = performance.now();
    if (!from && done >= n * 0.1) from = { done, at };
    if (from && done >= n * 0.9) return at > from.at ? ((done - from.done) * 1000) / (at - from.at) : NaN;
    if (Date.now() > deadline) throw new Error(`drain: ${done}/${n} after 10 minutes`);
    // Each count reads every task of the agent (tens of thousands after the accept scenario): polled often, it would
    // take CPU from the worker it measures. The rate comes from the counts and their times, so it stays exact.
    await sleep(DRAIN_POLL_MS);
  }
}

interface Children {
  bare: Child;
  llm: Child;
  fastify: Child;
  /** The scripted LLM answering after LLM_DELAY_MS (scenario 6 only). */
  slowLlm?: Child;
}

async function runOn(db: 'sqlite' | 'postgres', children: Children): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentry-bench-'));
  const pg = db === 'postgres' ? await createPgDatabase() : undefined;
  const stores: Store[] = [];
  const env: Record<string, string> = {
    AGENTRY_DATA_DIR: dataDir,
    ...SERVICE_ENV,
    ...(pg ? { DATABASE_URL: pg.url } : {}),
  };
  try {
    if (want('create') || want('accept') || want('schema')) await frontDoorScenarios(db, env, children);
    // Dropped now: PostgreSQL's autovacuum of its tens of thousands of tasks would compete with what follows.
    await pg?.drop();
    if (want('drain') && db === 'postgres') await workerScaling(db, env, children.llm, stores);
    if (want('sync')) await syncRoundTrip(db, env, children, stores);
    if (want('default')) {
      await defaultDeployment({
        db,
        env,
        bare: children.bare,
        llms: [{ delayMs: LLM_DELAY_MS, child: children.slowLlm! }, { delayMs: 0, child: children.llm }],
        connections: ACCEPT_CONNECTIONS,
        durationSec: DURATION,
        warmupSec: WARMUP,
        rounds: 3,
        bigBacklog: BIG_BACKLOG,
        stores,
        row: (r) => rows.push(r),
        extra: (line) => extras.push(line),
      });
    }
    if (want('peers')) {
      await peerComparison({
        db,
        env,
        llmUrl: children.llm.url,
        connections: [1, CONNECTIONS],
        rounds: 3,
        sliceSec: Math.max(2, DURATION / 3),
        warmupSec: WARMUP,
        stores,
        row: (r) => rows.push(r),
        extra: (line) => extras.push(line),
      });
    }
  } finally {
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    for (const store of stores) await store.drop();
  }
}

/** Scenarios 3, 1 and 4, then 5 with one worker (the backlog 1 left), on one front-door process (no worker). */
async function frontDoorScenarios(db: 'sqlite' | 'postgres', env: Record<string, string>, { bare, llm, fastify }: Children): Promise<void> {
  // Front door only: the accept paths are measured without task execution competing for the CPU.
  const front = await startService({ ...env, AGENTRY_ROLES: 'api,webhooks' });
  const idle = memoryOf(front.proc.pid!);
  extras.push(`- ${db}: idle RSS of the api+webhooks process after start: **${idle.rssMb.toFixed(0)} MB**`);
  const { id: agentId, publicUrl } = await setupAgent(front, llm.url);

  if (want('create')) {
    let n = 0;
    const create = await load({
      url: `${front.api}/v1/agents`,
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      setupBody: () => JSON.stringify({ name: `bench-${db}-${process.pid}-${++n}`, instructions: { role: ['r'], goal: ['g'], general: '' } }),
      connections: CONNECTIONS,
      durationSec: DURATION,
    });
    const createBare = await load({ url: `${bare.url}/v1/agents`, method: 'POST', body: '{"name":"x"}', connections: CONNECTIONS, durationSec: DURATION });
    rows.push({ scenario: '3. POST /v1/agents', db, result: create, ceiling: createBare, peakMb: memoryOf(front.proc.pid!).peakMb });
  }

  let accepted = 0;
  if (want('accept')) {
    const acceptLoad = { url: publicUrl, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Summarise the ticket' }) };
    const floorDb = db === 'postgres' ? env.DATABASE_URL! : join(env.AGENTRY_DATA_DIR!, 'floor-accept.db');
    const floor = await startChild('minimal-accept', { BENCH_FLOOR_DB: floorDb });
    const floorLoad = { ...acceptLoad, url: `${floor.url}/wh_x` };
    // The framework's own share of the gap: Fastify answering the same route with a constant.
    const fastifyLoad = { url: `${fastify.url}/wh_x`, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: '{"prompt":"x"}' };
    const bareLoad = { url: `${bare.url}/wh_x`, method: 'POST' as const, body: '{"prompt":"x"}' };
    let answered = 0;
    try {
      for (const connections of ACCEPT_CONNECTIONS) {
        // Fresh processes run code the JIT has not compiled yet (run 10 measured a cold Fastify at 46% of bare).
        if (WARMUP > 0) {
          answered += (await load({ ...acceptLoad, connections, durationSec: WARMUP })).requests;
          for (const l of [floorLoad, fastifyLoad]) await load({ ...l, connections, durationSec: WARMUP });
        }
        const [accept, acceptFloor, acceptBare, acceptFastify] = await interleaved(
          [acceptLoad, floorLoad, bareLoad, fastifyLoad].map((l) => ({ ...l, connections })),
          ROUNDS,
          DURATION / ROUNDS,
        );
        answered += accept!.requests;
        rows.push({ scenario: `1. async webhook accept, ${connections} connections`, db, result: accept!, ceiling: acceptBare, peakMb: memoryOf(front.proc.pid!).peakMb });
        rows.push({ scenario: `1. (floor) node:http + one durable row per call, grouped commits, ${connections} connections`, db, result: acceptFloor!, ceiling: acceptBare });
        rows.push({ scenario: `1. (reference) Fastify alone, constant answer, ${connections} connections`, db, result: acceptFastify!, ceiling: acceptBare });
        extras.push(`- ${db}, ${connections} connections: the service accepts at **${((100 * accept!.rps) / acceptFloor!.rps).toFixed(0)}% of the floor**'s rate (the least a durable accept does on this machine, measured in the same slices)`);
      }
    } finally {
      floor.proc.kill();
    }
    // The first list settles the task inbox: it moves every accepted task into the tasks table (see
    // docs/decisions.md, "The task inbox"). Timed, because that work was not paid by the accept.
    const t1 = performance.now();
    accepted = await countTasks(front, agentId, 'pending');
    const moveSec = (performance.now() - t1) / 1000;
    extras.push(
      `- ${db}: ${answered} async webhook calls answered (warm-ups included), ${accepted} pending tasks committed; the first list call moved them from the inbox into \`tasks\` in ${moveSec.toFixed(2)} s (**${(accepted / moveSec).toFixed(0)} tasks/s**)`,
    );
  }

  if (want('schema')) {
    // The schema endpoint on the largest corpus document.
    const doc = readFileSync(join(CORPUS, LARGEST), 'utf8');
    let t0 = performance.now();
    const connector = await json(`${front.api}/v1/connectors`, { method: 'POST', key: KEY, body: { name: 'kubernetes', openapi: doc } });
    const importMs = performance.now() - t0;
    const connection = await json(`${front.api}/v1/connectors/${connector.id}/connect`, { method: 'POST', key: KEY, body: { name: 'k8s', base_url: 'http://127.0.0.1:1' } });
    const ops = await json(`${front.api}/v1/tools/connectors/${connector.id}/operations?connection_id=${connection.id}`, { key: KEY });
    const op = (Array.isArray(ops) ? ops : ops.items).find((o: any) => o.method === 'post' && /Namespaced/.test(o.operationId)) ?? (Array.isArray(ops) ? ops : ops.items)[0];
    const schemaUrl = `${front.api}/v1/tools/connectors/${connector.id}/connections/${connection.id}/${op.id}/schema`;
    t0 = performance.now();
    const schemaText = JSON.stringify(await json(schemaUrl, { key: KEY }));
    const firstMs = performance.now() - t0;
    // The ceiling answers the same bytes, so the ratio compares the work, not the payload.
    await fetch(`${bare.url}/__schema`, { method: 'PUT', body: schemaText });
    // Latency (the target) with one connection, then throughput with CONNECTIONS.
    const cached1 = asLoad(await latency({ url: schemaUrl, headers: { 'x-api-key': KEY }, durationSec: DURATION / 2 }), DURATION / 2);
    const cachedBare1 = asLoad(await latency({ url: `${bare.url}/schema`, durationSec: DURATION / 2 }), DURATION / 2);
    rows.push({ scenario: `4. schema, cached, 1 connection (${LARGEST}, ${op.operationId})`, db, result: cached1, ceiling: cachedBare1, peakMb: memoryOf(front.proc.pid!).peakMb });
    const cached = await load({ url: schemaUrl, headers: { 'x-api-key': KEY }, connections: CONNECTIONS, durationSec: DURATION });
    const cachedBare = await load({ url: `${bare.url}/schema`, connections: CONNECTIONS, durationSec: DURATION });
    rows.push({ scenario: `4. schema, cached, ${CONNECTIONS} connections`, db, result: cached, ceiling: cachedBare, peakMb: memoryOf(front.proc.pid!).peakMb });
    extras.push(`- ${db}: import of ${LARGEST} (${(doc.length / 1e6).toFixed(1)} MB) ${importMs.toFixed(0)} ms; first schema request ${firstMs.toFixed(1)} ms; schema response ${(schemaText.length / 1024).toFixed(0)} KB`);
  }

  if (want('drain')) {
    // One worker works through the backlog the accept scenario left; bounded, since it holds tens of thousands of
    // tasks: the rate is taken over the first DRAIN_MAX.
    const worker1 = await startService({ ...env, AGENTRY_ROLES: 'worker' });
    const counted = Math.min(accepted, DRAIN_MAX);
    const rate1 = await drain(front, agentId, counted);
    rows.push({ scenario: '5. tasks completed per second, 1 worker', db, result: { rps: rate1, p50: NaN, p99: NaN, errors: 0, non2xx: 0, requests: counted, statuses: {} }, peakMb: memoryOf(worker1.proc.pid!).peakMb, note: `first ${counted} of ${accepted} tasks, steady part` });
    await worker1.stop();
  }
  await front.stop();
}

/**
 * Scenario 5 on PostgreSQL, one worker process and then two, each on a fresh backlog in a fresh database (the first
 * one still holds the rest of the accept backlog, which the workers would take first): what a second worker adds.
 */
async function workerScaling(db: 'postgres', env: Record<string, string>, llm: Child, stores: Store[]): Promise<void> {
  for (const workers of [1, 2]) {
    const store = await freshStore(db, env);
    stores.push(store);
    const front = await startService({ ...store.env, AGENTRY_ROLES: 'api,webhooks' });
    // The public URL is shown once, when the channel is enabled (only its hash is stored).
    const { id: agentId, publicUrl } = await setupAgent(front, llm.url, `Bench agent ${workers}`);
    await load({ url: publicUrl, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"hi"}', connections: CONNECTIONS, amount: BACKLOG });
    const backlog = await countTasks(front, agentId, 'pending');
    const started = await Promise.all(Array.from({ length: workers }, () => startService({ ...store.env, AGENTRY_ROLES: 'worker' })));
    const rate = await drain(front, agentId, backlog);
    const scenario = `5. tasks completed per second, ${workers} worker${workers > 1 ? 's' : ''}, fresh backlog`;
    rows.push({ scenario, db, result: { rps: rate, p50: NaN, p99: NaN, errors: 0, non2xx: 0, requests: backlog, statuses: {} }, note: `${backlog} tasks, steady part` });
    await Promise.all([...started.map((w) => w.stop()), front.stop()]);
  }
}

/**
 * Scenario 2: the synchronous webhook round trip with the instant LLM, all roles in one process (the default
 * deployment: the waiter hears the worker finish in-process; across processes on libsql it would poll). On a fresh
 * database: the tens of thousands of tasks the earlier scenarios left would be drained by this process's worker,
 * and PostgreSQL's autovacuum of them would compete for the CPU, during the measurement.
 */
async function syncRoundTrip(db: 'sqlite' | 'postgres', env: Record<string, string>, { bare, llm }: Children, stores: Store[]): Promise<void> {
  const store = await freshStore(db, env);
  stores.push(store);
  const full = await startService(store.env);
  try {
    const { id: agentId } = await setupAgent(full, llm.url);
    const keyUrl = `${full.webhook}/?agent_id=${agentId}`;
    const call = { url: keyUrl, method: 'POST' as const, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi' }) };
    // The LLM's own time for the request the service makes (streamed, with usage).
    const llmAlone = await latency({
      url: `${llm.url}/chat/completions`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }),
      durationSec: DURATION / 2,
    });
    if (WARMUP > 0) await latency({ ...call, durationSec: WARMUP });
    const sync1 = asLoad(await latency({ ...call, durationSec: DURATION }), DURATION);
    const syncBare1 = asLoad(await latency({ url: `${bare.url}/?agent_id=x`, method: 'POST', body: '{"prompt":"hi"}', durationSec: DURATION / 2 }), DURATION / 2);
    rows.push({ scenario: '2. sync webhook round trip, 1 connection', db, result: sync1, ceiling: syncBare1, peakMb: memoryOf(full.proc.pid!).peakMb });
    extras.push(`- ${db}: sync webhook overhead beyond the LLM's own time: p50 ${sync1.p50} ms - ${llmAlone.p50} ms (LLM alone, the same streamed request) = **${(sync1.p50 - llmAlone.p50).toFixed(2)} ms**`);
    const floor1 = await minimalSyncFloor(db, store, llm.url);
    rows.push({ scenario: '2. (floor) one LLM call + one durable commit, 1 connection', db, result: floor1, ceiling: syncBare1, peakMb: 0 });
    extras.push(
      `- ${db}: the least a durable synchronous webhook does on this machine now (one streamed LLM call, one committed row): ` +
        `p50 ${floor1.p50} ms, **${(floor1.p50 - llmAlone.p50).toFixed(2)} ms** beyond the LLM; the service's overhead is ${((sync1.p50 - llmAlone.p50) / Math.max(0.01, floor1.p50 - llmAlone.p50)).toFixed(1)}x that`,
    );
    const syncN = await load({ ...call, connections: CONNECTIONS, durationSec: DURATION });
    const syncBareN = await load({ url: `${bare.url}/?agent_id=x`, method: 'POST', body: '{"prompt":"hi"}', connections: CONNECTIONS, durationSec: DURATION });
    rows.push({ scenario: `2. sync webhook round trip, ${CONNECTIONS} connections`, db, result: syncN, ceiling: syncBareN, peakMb: memoryOf(full.proc.pid!).peakMb });
  } finally {
    await full.stop();
  }
}

/**
 * The floor of scenario 2, measured right after it on the same database and LLM: a bare node:http server that
 * makes the service's LLM call and commits one row per request (children.ts minimal-sync). What is left of the
 * service's overhead beyond it is the service's own work, not the database's durability or the machine's hops.
 */
async function minimalSyncFloor(db: 'sqlite' | 'postgres', store: Store, llmUrl: string): Promise<LoadResult> {
  const target = db === 'postgres' ? store.env.DATABASE_URL! : join(store.env.AGENTRY_DATA_DIR!, 'floor.db');
  const floor = await startChild('minimal-sync', { BENCH_FLOOR_LLM_URL: llmUrl, BENCH_FLOOR_DB: target });
  try {
    const call = { url: `${floor.url}/?agent_id=x`, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi' }) };
    if (WARMUP > 0) await latency({ ...call, durationSec: WARMUP });
    return asLoad(await latency({ ...call, durationSec: DURATION / 2 }), DURATION / 2);
  } finally {
    floor.proc.kill();
  }
}

async function main(): Promise<void> {
  // The production path: the transpiled build, as `npm start` runs it.
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: new URL('..', import.meta.url).pathname, stdio: 'inherit' });
  const bare = await startChild('bare');
  const llm = await startChild('instant-llm', { BENCH_LLM_DELAY_MS: '0' });
  const fastify = await startChild('fastify');
  const slowLlm = want('default') ? await startChild('instant-llm', { BENCH_LLM_DELAY_MS: String(LLM_DELAY_MS) }) : undefined;
  const dbs = (process.env.BENCH_DBS ?? 'sqlite,postgres').split(',') as ('sqlite' | 'postgres')[];
  try {
    for (const db of dbs) await runOn(db, { bare, llm, fastify, slowLlm });
    const llmCeiling = await load({
      url: `${llm.url}/chat/completions`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      connections: CONNECTIONS,
      durationSec: DURATION / 2,
    });
    extras.push(`- the instant LLM alone (the ceiling for tasks per second: one LLM call per task): ${fmt(llmCeiling)}`);
  } finally {
    bare.proc.kill();
    llm.proc.kill();
    fastify.proc.kill();
    slowLlm?.proc.kill();
  }
  const lines = [
    `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; ${CONNECTIONS} connections, ${DURATION} s per scenario.`,
    '',
    '| scenario | db | Agentry | bare node:http (ceiling) | ratio | errors | peak RSS |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const ours = Number.isNaN(r.result.p50) ? `${r.result.rps.toFixed(1)} tasks/s (${r.note})` : fmt(r.result);
      const ceil = r.ceiling ? fmt(r.ceiling) : '—';
      const ratio = r.ceiling ? `${((100 * r.result.rps) / r.ceiling.rps).toFixed(0)}%` : '—';
      return `| ${r.scenario} | ${r.db} | ${ours} | ${ceil} | ${ratio} | ${r.result.errors + r.result.non2xx}${Object.keys(r.result.statuses).length ? ' ' + JSON.stringify(r.result.statuses) : ''} | ${r.peakMb ? r.peakMb.toFixed(0) + ' MB' : '—'} |`;
    }),
    '',
    ...extras,
  ];
  const report = lines.join('\n');
  process.stdout.write(report + '\n');
  mkdirSync(new URL('results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('results/latest.md', import.meta.url), report + '\n');
}

await main();
