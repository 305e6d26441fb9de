/**
 * Instructions per asynchronous webhook accept, counted by valgrind's callgrind in the service as `npm start` runs it
 * (the production build, real HTTP, libsql): a number that does not move with the load of a shared machine, unlike
 * throughput and CPU time, so two builds can be compared one after the other.
 *
 *   node scripts/build.mjs && node --import tsx bench/accept-instructions.ts [warm-up calls] [measured calls]
 *
 * AGENTRY_ROLES (default `api,webhooks`) picks the roles. The service runs under callgrind with instrumentation off
 * (about ten times slower than native) while it starts and takes the warm-up calls, so V8 has compiled the hot
 * path; then instrumentation is switched on for exactly the measured calls (64 connections) and the counts dumped.
 * User-space instructions only: the kernel's share (socket writes, the WAL) is not in the number. About 3 minutes.
 * Repeat runs of one build agree within about 3%.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, load, startChild } from './lib.js';
import { KEY, setupAgent } from './service-setup.js';

const warm = Number(process.argv[2] ?? 20_000);
const measured = Number(process.argv[3] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'agentry-callgrind-'));
const [apiPort, whPort] = [await freePort(), await freePort()];
const llm = await startChild('instant-llm', { BENCH_LLM_DELAY_MS: '1000' });
const unlimited = '10000000';
const proc = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, 'callgrind.out')}`, process.execPath, 'dist/main.js', 'serve'], {
  stdio: 'ignore',
  env: {
    ...process.env,
    AGENTRY_LOG_LEVEL: 'warn',
    AGENTRY_API_PORT: String(apiPort),
    AGENTRY_WEBHOOK_PORT: String(whPort),
    AGENTRY_DATA_DIR: dir,
    AGENTRY_ROLES: process.env.AGENTRY_ROLES ?? 'api,webhooks',
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
  const { publicUrl } = await setupAgent(svc as never, llm.url);
  const accept = { url: publicUrl, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Summarise the ticket' }), connections: 64 };
  await load({ ...accept, amount: warm });
  execFileSync('callgrind_control', ['--instr=on', String(proc.pid)], { stdio: 'ignore' });
  const result = await load({ ...accept, amount: measured });
  execFileSync('callgrind_control', ['--dump', String(proc.pid)], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 2000));
  let instructions = 0;
  for (const f of readdirSync(dir).filter((n) => /^callgrind\.out\.\d+$/.test(n))) {
    instructions += Number(/^summary: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'))?.[1] ?? 0);
  }
  console.log(JSON.stringify({ roles: process.env.AGENTRY_ROLES ?? 'api,webhooks', calls: measured, errors: result.errors, instructionsPerCall: Math.round(instructions / measured) }));
} finally {
  proc.kill('SIGKILL');
  llm.proc.kill();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
