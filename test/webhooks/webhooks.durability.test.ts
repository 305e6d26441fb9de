import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { scriptedAgentFields } from '../support/agents.js';
import { createTestEnv, TEST_DBS, type TestEnv } from '../support/harness.js';
import { killHard } from '../support/processes.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CALLS = 1000;
/** The server is killed once this many calls have been answered `Started`. */
const KILL_AFTER = 400;
const PARALLEL = 40;

interface Served {
  child: ChildProcess;
  api: string;
  hooks: string;
}

/**
 * The durability acceptance (issue 4): 1000 asynchronous webhook calls against a real `agentry serve` process that
 * is SIGKILLed in the middle. Every call answered `Started` must have its task, and after a restart each of those
 * tasks completes exactly once.
 */
describe.each(TEST_DBS)('webhook durability under SIGKILL (%s)', (kind) => {
  let env: TestEnv;
  let llm: ScriptedLlmServer;
  const children: ChildProcess[] = [];

  /** Starts `agentry serve` (api, webhooks, worker) on free ports and reads them from its log. */
  async function serve(): Promise<Served> {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'agentry.mjs'), 'serve'], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...env.env,
        AGENTRY_API_PORT: '0',
        AGENTRY_WEBHOOK_PORT: '0',
        AGENTRY_LOG_LEVEL: 'info',
        AGENTRY_TASK_LEASE_MS: '5000',
        AGENTRY_WORKER_CONCURRENCY: '16',
        AGENTRY_EGRESS_ALLOW: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const urls: { api?: string; webhooks?: string } = {};
    const lines = createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 30_000);
      child.once('exit', () => reject(new Error(`server exited: ${stderr}`)));
      lines.on('line', (line) => {
        const m = /(api|webhook receiver) listening on (http:\/\/[^"\s]+)/.exec(line);
        if (m) urls[m[1] === 'api' ? 'api' : 'webhooks'] = m[2];
        if (urls.api && urls.webhooks) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    return { child, api: urls.api!, hooks: urls.webhooks! };
  }

  beforeAll(async () => {
    llm = await startOpenAIServer();
    // The worker cannot keep up with the senders, so the kill lands while tasks are queued and running.
    llm.handle((req) => ({ text: `done: ${req.lastUserText}` }));
    env = await createTestEnv(kind);
  });
  afterAll(async () => {
    for (const c of children) await killHard(c);
    await llm?.close();
    await env?.cleanup();
  });

  it(`every call answered Started has its task, which completes exactly once after a restart (${CALLS} calls)`, async () => {
    let server = await serve();
    const key = await keyFor(server.api, env);
    const call = (path: string, body: unknown) =>
      fetch(server.api + path, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const agent = (await (await call('/v1/agents', agentFields(llm.baseUrl))).json()) as { id: string };
    const channel = (await (await call(`/v1/agents/${agent.id}/webhook`, {})).json()) as { url: string };
    const secretPath = new URL(channel.url).pathname;

    const started: string[] = [];
    let next = 0;
    let killed: Promise<void> | undefined;
    const sender = async () => {
      while (next < CALLS) {
        const i = next++;
        const taskId = `dur-${i}`;
        try {
          const r = await fetch(server.hooks + secretPath, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ prompt: `call ${i}`, task_id: taskId }),
          });
          const body = await r.json();
          if (r.status === 200 && (body as { status?: string }).status === 'Started') started.push(taskId);
        } catch {
          // connection refused or reset: the server is gone, this call was not answered
        }
        if (started.length >= KILL_AFTER && !killed) killed = killHard(server.child);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, sender));
    await killed;
    expect(started.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(started.length).toBeLessThan(CALLS);

    server = await serve();
    const get = async (path: string) => (await fetch(server.api + path, { headers: { 'x-api-key': key } })).json() as Promise<any>;
    const deadline = Date.now() + 240_000;
    for (;;) {
      const all = await get(`/v1/tasks?agent_id=${agent.id}&per_page=1`);
      const done = await get(`/v1/tasks?agent_id=${agent.id}&status=completed&per_page=1`);
      if (all.total >= started.length && done.total === all.total) break;
      if (Date.now() > deadline) {
        const stuck = [];
        for (const s of ['pending', 'executing', 'error', 'failed', 'paused', 'stopped']) {
          const page = await get(`/v1/tasks?agent_id=${agent.id}&status=${s}&per_page=50`);
          stuck.push(...page.items.map((t: any) => ({ id: t.id, status: t.status, attempts: t.execution_attempts, result: t.result })));
        }
        throw new Error(`tasks not finished: ${done.total}/${all.total}: ${JSON.stringify(stuck)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }

    for (const id of started) {
      const task = await get(`/v1/tasks/${id}`);
      expect(task, id).toMatchObject({ id, status: 'completed', source: 'webhook', result: `done: call ${id.slice(4)}` });
      const events = (await get(`/v1/tasks/${id}/events`)) as { type: string }[];
      expect(events.filter((e) => e.type === 'task_finished').length, id).toBe(1);
    }
  }, 420_000);
});

/** An API key made with the CLI, as an operator would (`agentry keys create`). */
async function keyFor(_api: string, env: TestEnv): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'agentry.mjs'), 'keys', 'create', '--org', 'durable'], {
    cwd: ROOT,
    env: { ...process.env, ...env.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`keys create exited ${code}`);
  return out.trim();
}

function agentFields(baseUrl: string) {
  return scriptedAgentFields(baseUrl, { name: 'durable-agent', model_name: 'gpt-4o' });
}
