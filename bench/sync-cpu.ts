/**
 * CPU per synchronous webhook run, in process, without HTTP: what the service's own work costs per run of the
 * default deployment (all roles in one process, the default worker concurrency): the key-form webhook call, the
 * task's commit, the agent run against an OpenAI-compatible LLM, its trace and outcome, the wait for the final task.
 * 16 runs in flight, like scenarios 2 and 7 at 16 connections. The LLM is the instant scripted server
 * (test/fakes/openai-server.ts through `bench/children.ts instant-llm`) in its own process, so its CPU is not counted.
 *
 *   npx tsx bench/sync-cpu.ts [sqlite|postgres] [seconds per round] [rounds]
 *   SYNC_CPU_PROFILE=/tmp/sync.cpuprofile npx tsx bench/sync-cpu.ts sqlite   # where the time goes
 *
 * Prints process CPU time per run (`cpuUsPerCall`) and runs/s (`callsPerSecond`) for each round after a warm-up round (`SYNC_CPU_WARMUP_SEC`, 6 s).
 * CPU per run moves much less than throughput on a shared machine, but not nothing: compare runs taken at the same
 * time or one after the other. `SYNC_CPU_PROFILE` writes a V8 CPU profile of the measured rounds only (not the
 * start-up, module loading or warm-up), for Chrome DevTools or a script that sums self time by function. Source maps
 * are turned off as `npm start` (dist/, no --enable-source-maps) has them: tsx turns them on, which makes every
 * Error's stack far dearer than in production.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createTestApp } from '../test/support/harness.js';
import { cpuRound, startChild } from './lib.js';

process.setSourceMapsEnabled(false);

const kind = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const seconds = Number(process.argv[3] ?? 5);
const rounds = Number(process.argv[4] ?? 3);
const IN_FLIGHT = 16;

const llm = await startChild('instant-llm');
const t = await createTestApp(kind, { roles: 'api,webhooks,worker', startWorker: true, env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1' } });
// The agent of bench/service-setup.ts.
const agentId = await t.createAgent({
  model_provider: 'openai',
  model_name: 'gpt-4o-mini',
  llm_api_base: llm.url,
  llm_credentials: { name: 'bench', value: 'sk-bench' },
  output_format: 'text',
  should_stage_before_publish: false,
});
const call = () => t.c.webhooks.invoke({ form: 'key', apiKey: t.keyA, query: { agent_id: agentId }, body: { prompt: 'hi' }, files: [] });

const first = await call();
const value = first.kind === 'result' ? (first.value as { status?: string; result?: unknown }) : undefined;
if (value?.status !== 'completed' || value.result !== 'Done.') throw new Error(`the run did not complete: ${JSON.stringify(first)}`);

const round = (ms: number) => cpuRound(ms, IN_FLIGHT, call);

// Long enough for the hot paths to be optimised by V8 on a busy machine (2 s left the first rounds ~30% dearer).
await round(Number(process.env.SYNC_CPU_WARMUP_SEC ?? 6) * 1000);
const profileTo = process.env.SYNC_CPU_PROFILE;
const session = profileTo ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
for (let i = 0; i < rounds; i++) console.log(kind, await round(seconds * 1000));
if (session) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(profileTo!, JSON.stringify(profile));
  session.disconnect();
}
await t.close();
llm.proc.kill();
