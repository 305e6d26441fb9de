/**
 * What `task_level_strategies.duplication_prevention` costs the asynchronous webhook accept (src/tasks/task-dedup.ts):
 *
 *   npm run build && npx tsx bench/dedup-accept.ts [sqlite|postgres]
 *
 * The default deployment (all roles, `npm start`'s process) on a fresh store, a scripted LLM answering after 1 s, two
 * agents: one plain, one deduplicating by `event_id`. In interleaved slices at 64 connections: the plain agent's
 * accept (the task inbox), the deduplicating agent's accept of new events (each a distinct `event_id`: the key taken in
 * the task's own transaction) and of one event delivered again and again (answered with the first delivery's task).
 */
import { interleaved, json, startChild, startService, type LoadOptions, type LoadResult } from './lib.js';
import { KEY, SERVICE_ENV, freshStore, setupAgent } from './service-setup.js';

const db = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const CONNECTIONS = 64;
const llm = await startChild('instant-llm', { BENCH_LLM_DELAY_MS: '1000' });
const store = await freshStore(db, SERVICE_ENV);
const svc = await startService(store.env);
try {
  const plain = await setupAgent(svc, llm.url, 'Plain');
  const dedup = await setupAgent(svc, llm.url, 'Deduplicating');
  await json(`${svc.api}/v1/agents/${dedup.id}`, {
    method: 'PATCH',
    key: KEY,
    body: { task_level_strategies: { duplication_prevention: { enabled: true, ttl_minutes: 10, selectors: ['event_id'] } } },
  });
  let n = 0;
  const post = (url: string, body: () => string): LoadOptions => ({
    url: `${url}?asynchronous=true`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    setupBody: body,
    connections: CONNECTIONS,
  });
  const [p, unique, repeated] = await interleaved(
    [
      post(plain.publicUrl, () => JSON.stringify({ prompt: 'Summarise the new booking', event_id: `e-${n++}` })),
      post(dedup.publicUrl, () => JSON.stringify({ prompt: 'Summarise the new booking', event_id: `e-${n++}` })),
      post(dedup.publicUrl, () => JSON.stringify({ prompt: 'Summarise the new booking', event_id: 'the-same-event' })),
    ],
    3,
    3,
  );
  const line = (name: string, r: LoadResult) => `${name}: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, errors ${r.errors + r.non2xx}`;
  console.log(`${db}, default deployment, ${CONNECTIONS} connections, LLM 1 s, interleaved 3 x 3 s:`);
  console.log(`- ${line('plain agent (task inbox)', p)}`);
  console.log(`- ${line('duplication_prevention, new events', unique)}: ${Math.round((unique.rps / p.rps) * 100)}% of the plain accept`);
  console.log(`- ${line('duplication_prevention, one event again and again', repeated)}: ${Math.round((repeated.rps / p.rps) * 100)}% of the plain accept`);
} finally {
  await svc.stop();
  llm.proc.kill();
  await store.drop();
}
