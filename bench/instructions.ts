/**
 * Instructions per call, counted by valgrind's callgrind in the service as `npm start` runs it (the production build,
 * real HTTP, libsql): a number that does not move with the load of a shared machine, unlike throughput and CPU time,
 * so two builds can be compared one after the other.
 *
 *   node scripts/build.mjs && node --import tsx bench/instructions.ts accept [warm-up calls] [measured calls]
 *   node scripts/build.mjs && node --import tsx bench/instructions.ts sync [warm-up calls] [measured calls]
 *
 * - `accept`: the asynchronous webhook accept (the public URL, 64 connections), with the roles of AGENTRY_ROLES
 *   (default `api,webhooks`; with the worker on, the count also holds the runs of the slow LLM that fall in the
 *   window, which under valgrind is ten times longer than the calls' real time; `BENCH_LLM_DELAY_MS=600000` keeps
 *   the runs from ending in the window, so what remains is the worker's presence: +15% instructions per call, of
 *   which half is V8's optimising compiler);
 * - `sync`: the synchronous webhook run of scenario 7 (the key form, 16 connections, all roles in one process,
 *   the instant scripted LLM in its own process, so only the service's side of each call is counted).
 *
 * The service runs under callgrind with instrumentation off (about ten times slower than native) while it starts and
 * takes the warm-up calls, so V8 has compiled the hot path; then instrumentation is switched on for exactly the
 * measured calls and the counts dumped. User-space instructions only, of every thread: the kernel's share (socket
 * writes, the WAL) is not in the number. A few minutes. Repeat runs of one build agree within about 3%.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, load, serviceNodeArgs, startChild, type LoadOptions } from './lib.js';
import { KEY, setupAgent } from './service-setup.js';

const mode = process.argv[2] ?? 'accept';
if (mode !== 'accept' && mode !== 'sync') throw new Error(`mode "${mode}": accept or sync`);
const sync = mode === 'sync';
const warm = Number(process.argv[3] ?? (sync ? 4_000 : 20_000));
const measured = Number(process.argv[4] ?? (sync ? 2_000 : 10_000));
const roles = sync ? 'api,webhooks,worker' : (process.env.AGENTRY_ROLES ?? 'api,webhooks');
const dir = mkdtempSync(join(tmpdir(), 'agentry-callgrind-'));
const [apiPort, whPort] = [await freePort(), await freePort()];
const llm = await startChild('instant-llm', { BENCH_LLM_DELAY_MS: sync ? '0' : (process.env.BENCH_LLM_DELAY_MS ?? '1000') });
const unlimited = '10000000';
const proc = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, process.execPath, ...serviceNodeArgs(), 'dist/main.js', 'serve'], {
  stdio: 'ignore',
  env: {
    ...process.env,
    AGENTRY_LOG_LEVEL: 'warn',
    AGENTRY_API_PORT: String(apiPort),
    AGENTRY_WEBHOOK_PORT: String(whPort),
    AGENTRY_DATA_DIR: dir,
    AGENTRY_ROLES: roles,
    AGENTRY_BOOTSTRAP_API_KEY: KEY,
    AGENTRY_MASTER_KEY: 'b'.repeat(64),
    AGENTRY_EGRESS_ALLOW: '127.0.0.1',
    AGENTRY_RATE_LIMIT_KEY_PER_SECOND: unlimited,
    AGENTRY_RATE_LIMIT_KEY_BURST: unlimited,
    AGENTRY_RATE_LIMIT_WEBHOOK_PER_SECOND: unlimited,
    AGENTRY_RATE_LIMIT_WEBHOOK_BURST: unlimited,
  },
});
const svc = { api: `http://127.0.0.1:${apiPort}`, webhook: `http://127.0.0.1:${whPort}` };
try {
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    const up = await Promise.all([fetch(`${svc.api}/health`), fetch(`${svc.webhook}/health`)]).then((r) => r.every((x) => x.ok), () => false);
    if (up) break;
    if (Date.now() > deadline) throw new Error('the service did not start under valgrind within 15 minutes');
    await new Promise((r) => setTimeout(r, 1000));
  }
  const { id, publicUrl } = await setupAgent(svc as never, llm.url);
  const call: LoadOptions = sync
    ? { url: `${svc.webhook}/?agent_id=${id}`, method: 'POST' as const, headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi' }), connections: 16 }
    : { url: publicUrl, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Summarise the ticket' }), connections: 64 };
  await load({ ...call, amount: warm });
  execFileSync('callgrind_control', ['--instr=on', String(proc.pid)], { stdio: 'ignore' });
  const result = await load({ ...call, amount: measured });
  execFileSync('callgrind_control', ['--dump', String(proc.pid)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 2000));
  let instructions = 0;
  for (const f of readdirSync(dir).filter((n) => /^callgrind\.out\.\d+$/.test(n))) {
    instructions += Number(/^summary: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'))?.[1] ?? 0);
  }
  console.log(JSON.stringify({ mode, roles, calls: measured, errors: result.errors, non2xx: result.non2xx, instructionsPerCall: Math.round(instructions / measured) }));
} finally {
  proc.kill('SIGKILL');
  llm.proc.kill();
  if (process.env.BENCH_KEEP_CALLGRIND) console.log(`callgrind output kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
