import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
// scratch (not committed): CPU profile of the production service under the accept load
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, load, startChild } from './lib.js';
import { KEY, setupAgent } from './service-setup.js';
const dir = mkdtempSync(join(tmpdir(), 'agentry-prof-'));
const [apiPort, whPort] = [await freePort(), await freePort()];
const llm = await startChild('instant-llm', { BENCH_LLM_DELAY_MS: process.env.DELAY ?? '1000' });
const unlimited = '10000000';
const proc = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), 'dist/main.js', 'serve'], {
  stdio: 'inherit',
  env: { ...process.env, AGENTRY_LOG_LEVEL: 'warn', AGENTRY_API_PORT: String(apiPort), AGENTRY_WEBHOOK_PORT: String(whPort), AGENTRY_DATA_DIR: dir,
    AGENTRY_ROLES: process.env.AGENTRY_ROLES ?? 'api,webhooks,worker', AGENTRY_BOOTSTRAP_API_KEY: KEY, AGENTRY_MASTER_KEY: 'b'.repeat(64), AGENTRY_EGRESS_ALLOW: '127.0.0.1',
    AGENTRY_RATE_LIMIT_KEY_PER_SECOND: unlimited, AGENTRY_RATE_LIMIT_KEY_BURST: unlimited, AGENTRY_RATE_LIMIT_WEBHOOK_PER_SECOND: unlimited, AGENTRY_RATE_LIMIT_WEBHOOK_BURST: unlimited },
});
const svc = { api: `http://127.0.0.1:${apiPort}`, webhook: `http://127.0.0.1:${whPort}` };
for (;;) { const up = await Promise.all([fetch(`${svc.api}/health`), fetch(`${svc.webhook}/health`)]).then((r) => r.every((x) => x.ok), () => false); if (up) break; await new Promise((r) => setTimeout(r, 300)); }
const { publicUrl } = await setupAgent(svc as never, llm.url);
const accept = { url: publicUrl, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Summarise the ticket' }), connections: 64 };
await load({ ...accept, durationSec: 4 });
const st = () => { const f = require('node:fs').readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1].split(' '); return [Number(f[11]), Number(f[12])]; };
const a = st();
const r = await load({ ...accept, durationSec: Number(process.env.SEC ?? 20) });
const b = st(); console.log(JSON.stringify({ rps: r.rps, p99: r.p99, userUsPerCall: (b[0]-a[0])*1e4/r.requests, sysUsPerCall: (b[1]-a[1])*1e4/r.requests }));
proc.kill('SIGTERM');
await new Promise((res) => proc.on('exit', res));
if (process.env.PROF) console.log(join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!));
llm.proc.kill();
process.exit(0);
