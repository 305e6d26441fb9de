/**
 * Two builds side by side: each one's `dist/` runs as the default deployment (every role in one process, as
 * `npm start` runs it) on a fresh database of its own, both on one instant scripted LLM, and the synchronous webhook
 * loads them in alternating 2 s slices at 16 connections. Prints each build's runs/s, service CPU per run and peak
 * RSS (from /proc), and the medians of the slice pairs' ratios (B/A). On this shared machine, whose speed moves by 2x
 * within a minute, separate runs of two builds cannot be compared; slices of both taken in turn can.
 *
 *   git worktree add /tmp/old <rev> && ln -s $PWD/node_modules /tmp/old/ && (cd /tmp/old && node scripts/build.mjs)
 *   npm run build && npx tsx bench/ab-builds.ts /tmp/old . [postgres|sqlite] [slice pairs, 8]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort, load, serviceNodeArgs, sleep, startChild } from './lib.js';
import { KEY, SERVICE_ENV, freshStore, setupAgent } from './service-setup.js';
const [dirA, dirB] = [process.argv[2], process.argv[3]];
if (!dirA || !dirB) throw new Error('usage: npx tsx bench/ab-builds.ts <build A dir> <build B dir> [postgres|sqlite] [slice pairs]');
const db = (process.argv[4] ?? 'postgres') as 'sqlite' | 'postgres';
const pairs = Number(process.argv[5] ?? 8);
const SLICE_SEC = 2;

/** A process's peak resident memory (VmHWM) in MB. */
function peakMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

/** A process's CPU time in ms (utime + stime, in 10 ms ticks). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

const base = { ...SERVICE_ENV, AGENTRY_LOG_LEVEL: 'warn' };
const llm = await startChild('instant-llm');

/** One build's default deployment, its agent, and the synchronous webhook call that loads it. */
async function start(dir: string) {
  const store = await freshStore(db, base);
  const [api, wh] = [await freePort(), await freePort()];
  const proc = spawn(process.execPath, [...serviceNodeArgs(), 'dist/main.js', 'serve'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...store.env, AGENTRY_API_PORT: String(api), AGENTRY_WEBHOOK_PORT: String(wh) },
  });
  const svc = { proc, api: `http://127.0.0.1:${api}`, webhook: `http://127.0.0.1:${wh}`, stop: async () => void proc.kill() };
  for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the service of ${dir} did not start`);
    try {
      if ((await fetch(`${svc.api}/health`)).ok && (await fetch(`${svc.webhook}/health`)).ok) break;
    } catch {}
  }
  const { id } = await setupAgent(svc as never, llm.url);
  const call = { url: `${svc.webhook}/?agent_id=${id}`, method: 'POST' as const, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi' }), connections: 16 };
  return { proc, store, call };
}

const builds = { A: await start(dirA), B: await start(dirB) };
for (const b of Object.values(builds)) await load({ ...b.call, durationSec: 3 }); // warm-up
const totals = { A: { cpuMs: 0, runs: 0 }, B: { cpuMs: 0, runs: 0 } };
const rpsRatios: number[] = [];
const cpuRatios: number[] = [];
for (let i = 0; i < pairs; i++) {
  const slice = { A: { rps: 0, cpuUs: 0 }, B: { rps: 0, cpuUs: 0 } };
  // Which build goes first alternates, so neither always follows the other's load.
  for (const name of i % 2 ? (['B', 'A'] as const) : (['A', 'B'] as const)) {
    const b = builds[name];
    const c0 = cpuMs(b.proc.pid!);
    const r = await load({ ...b.call, durationSec: SLICE_SEC });
    const used = cpuMs(b.proc.pid!) - c0;
    const runs = r.rps * SLICE_SEC;
    totals[name].cpuMs += used;
    totals[name].runs += runs;
    slice[name] = { rps: r.rps, cpuUs: (used * 1000) / runs };
  }
  rpsRatios.push(slice.B.rps / slice.A.rps);
  cpuRatios.push(slice.B.cpuUs / slice.A.cpuUs);
}
for (const [name, t] of Object.entries(totals)) {
  const pid = builds[name as 'A' | 'B'].proc.pid!;
  console.log(
    `${name} (${name === 'A' ? dirA : dirB}): ${(t.runs / (pairs * SLICE_SEC)).toFixed(0)} runs/s, service CPU ${((t.cpuMs * 1000) / t.runs).toFixed(0)} us per run, peak RSS ${peakMb(pid)} MB`,
  );
}
const median = (v: number[]) => [...v].sort((x, y) => x - y)[v.length >> 1]!.toFixed(3);
console.log(`B/A, medians of ${pairs} slice pairs: runs/s ${median(rpsRatios)}, service CPU per run ${median(cpuRatios)}`);
for (const b of Object.values(builds)) b.proc.kill();
llm.proc.kill();
await sleep(500);
for (const b of Object.values(builds)) await b.store.drop();
process.exit(0);
