import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
// autocannon ships no types; the few fields used here are typed by LoadResult below.
// @ts-expect-error no declaration file
import autocannon from 'autocannon';

export interface Child {
  proc: ChildProcess;
  url: string;
}

const ROOT = new URL('..', import.meta.url).pathname;

// Children must not outlive a benchmark that fails half-way (they would hold ports, CPU and the output pipe).
const spawned = new Set<ChildProcess>();
process.on('exit', () => spawned.forEach((p) => p.exitCode === null && p.kill('SIGKILL')));
process.on('uncaughtException', (e) => {
  console.error(e);
  process.exit(1);
});
process.on('unhandledRejection', (e) => {
  console.error(e);
  process.exit(1);
});
function track(p: ChildProcess): ChildProcess {
  spawned.add(p);
  p.once('exit', () => spawned.delete(p));
  return p;
}

/** Starts `node --import tsx bench/children.ts <kind>` and waits for its `{"url"}` line. */
export async function startChild(kind: string, env: Record<string, string> = {}): Promise<Child> {
  const proc = spawnTracked(process.execPath, ['--import', 'tsx', 'bench/children.ts', kind], env);
  const url = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout! });
    rl.once('line', (line) => resolve(JSON.parse(line).url));
    proc.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
  });
  return { proc, url };
}

/** A child process that dies with the benchmark, its stdout piped (for a `{"url"}` line), its stderr shown. */
export function spawnTracked(command: string, args: string[], env: Record<string, string>): ChildProcess {
  return track(spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] }));
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Service {
  proc: ChildProcess;
  api: string;
  webhook: string;
  stop(): Promise<void>;
}

/**
 * The node flags the service runs with: those `npm start` gives it (package.json), so that the benchmark measures the
 * process users start, then BENCH_SERVICE_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
 */
export function serviceNodeArgs(): string[] {
  const start: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start;
  const flags = /\bnode ((?:--\S+ )*)dist\/main\.js serve\b/.exec(start);
  if (!flags) throw new Error(`package.json: the start script no longer runs "node [flags] dist/main.js serve": ${start}`);
  return [...flags[1]!.split(' '), ...(process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ')].filter(Boolean);
}

/**
 * The real service as `npm start` runs it (`dist/main.js serve`; run.ts builds first) in a child process, ready when
 * /health answers on both listeners. `dir`: the checkout whose build runs (another build, for an A/B comparison).
 */
export async function startService(env: Record<string, string>, dir = ROOT): Promise<Service> {
  const apiPort = await freePort();
  const whPort = await freePort();
  const proc = track(
    spawn(process.execPath, [...serviceNodeArgs(), 'dist/main.js', 'serve'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, AGENTRY_LOG_LEVEL: 'warn', AGENTRY_API_PORT: String(apiPort), AGENTRY_WEBHOOK_PORT: String(whPort), ...env },
    }),
  );
  const api = `http://127.0.0.1:${apiPort}`;
  const webhook = `http://127.0.0.1:${whPort}`;
  const deadline = Date.now() + 60_000;
  const roles = env.AGENTRY_ROLES ?? 'api,webhooks,worker';
  const probes = [roles.includes('api') && api, roles.includes('webhooks') && webhook].filter(Boolean) as string[];
  for (const base of probes) {
    for (;;) {
      if (proc.exitCode !== null) throw new Error('service exited during start');
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {}
      if (Date.now() > deadline) throw new Error('service did not start');
      await sleep(100);
    }
  }
  if (!probes.length) await sleep(1500);
  return {
    proc,
    api,
    webhook,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resident memory of a process now, and its peak (VmHWM), in MB. */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+)`, 'm'))?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  requests: number;
  /** status code -> count, for the non-2xx answers */
  statuses: Record<string, number>;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Called per request to vary the body (unique names). */
  setupBody?: () => string;
  connections: number;
  durationSec?: number;
  amount?: number;
}

export async function load(o: LoadOptions): Promise<LoadResult> {
  const r = await autocannon({
    url: o.url,
    method: o.method ?? 'GET',
    headers: o.headers,
    body: o.body,
    connections: o.connections,
    pipelining: 1,
    ...(o.amount ? { amount: o.amount } : { duration: o.durationSec ?? 10 }),
    requests: o.setupBody ? [{ setupRequest: (req: any) => ({ ...req, body: o.setupBody!() }) }] : undefined,
  });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
    requests: r.requests.total,
    statuses: Object.fromEntries(Object.entries((r.statusCodeStats ?? {}) as Record<string, { count: number }>).filter(([k]) => !k.startsWith('2')).map(([k, v]) => [k, v.count])),
  };
}

/**
 * Runs the loads in turn, `rounds` times over (A B C, A B C, ...), each for `sliceSec`, and merges each load's
 * slices: requests per second over all its slices, p50 the request-weighted mean of its slices' p50s, p99 the worst
 * slice's. On this shared machine the bare server alone measured 22k and 42k requests per second a minute apart, so
 * a ratio of two loads run one after the other measures the machine as much as the service; interleaved in short
 * slices, both see the same moments.
 */
export async function interleaved(loads: LoadOptions[], rounds: number, sliceSec: number): Promise<LoadResult[]> {
  const slices: LoadResult[][] = loads.map(() => []);
  for (let r = 0; r < rounds; r++) for (const [i, o] of loads.entries()) slices[i]!.push(await load({ ...o, durationSec: sliceSec }));
  return slices.map((s) => {
    const requests = s.reduce((n, x) => n + x.requests, 0);
    const statuses: Record<string, number> = {};
    for (const x of s) for (const [k, v] of Object.entries(x.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    return {
      rps: requests / (rounds * sliceSec),
      p50: Math.round((s.reduce((n, x) => n + x.p50 * x.requests, 0) / Math.max(1, requests)) * 100) / 100,
      p99: Math.max(...s.map((x) => x.p99)),
      errors: s.reduce((n, x) => n + x.errors, 0),
      non2xx: s.reduce((n, x) => n + x.non2xx, 0),
      requests,
      statuses,
    };
  });
}

export async function json(url: string, init: Omit<RequestInit, 'body'> & { key?: string; body?: unknown } = {}): Promise<any> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(init.key ? { 'x-api-key': init.key } : {}) };
  const res = await fetch(url, { ...init, headers, body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url} -> ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

export interface LatencyResult {
  requests: number;
  p50: number;
  p99: number;
  /** non-2xx answers or transport errors */
  failures: number;
}

/**
 * Sequential requests on one keep-alive connection for `durationSec`, timed with performance.now(): the
 * latency of a request with nothing queued before it, at 0.01 ms resolution (autocannon's histogram reports
 * whole milliseconds, too coarse for targets of a few milliseconds).
 */
export async function latency(o: { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; durationSec: number }): Promise<LatencyResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(o.url);
  const once = () =>
    new Promise<boolean>((resolve) => {
      const req = http.request(url, { method: o.method ?? 'GET', headers: o.headers, agent }, (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve((res.statusCode ?? 0) < 300));
      });
      req.on('error', () => resolve(false));
      req.end(o.body);
    });
  for (let i = 0; i < 20; i++) await once();
  const times: number[] = [];
  let failures = 0;
  const end = performance.now() + o.durationSec * 1000;
  while (performance.now() < end) {
    const t = performance.now();
    if (!(await once())) failures++;
    times.push(performance.now() - t);
  }
  agent.destroy();
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(times.length * q))]! * 100) / 100;
  return { requests: times.length, p50: at(0.5), p99: at(0.99), failures };
}

export interface CpuRound {
  calls: number;
  /** Process CPU time (user + system) per call, in microseconds. */
  cpuUsPerCall: number;
  callsPerSecond: number;
}

/**
 * In-process CPU per call (bench/accept-cpu.ts, bench/sync-cpu.ts): `inFlight` callers repeat `call` for `ms`; the
 * process's CPU time over the round divided by the calls made. CPU time moves less than throughput on a shared
 * machine, so rounds taken one after the other compare.
 */
export async function cpuRound(ms: number, inFlight: number, call: () => Promise<unknown>): Promise<CpuRound> {
  let calls = 0;
  const end = Date.now() + ms;
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < end) {
        await call();
        calls++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - wall0;
  return { calls, cpuUsPerCall: Math.round(((cpu.user + cpu.system) / calls) * 10) / 10, callsPerSecond: Math.round(calls / (wall / 1000)) };
}
