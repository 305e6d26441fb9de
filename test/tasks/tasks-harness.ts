import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { buildApiApp } from '../../src/http/api.app.js';
import { createLogger } from '../../src/lib/logger.js';
import type { RunOutcome, RunRequest, TaskRunner } from '../../src/runtime/task-runner.js';
import type { Task } from '../../src/tasks/task.types.js';
import { createTestEnv, type DbKind, type TestEnv } from '../support/harness.js';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

/**
 * An in-process API plus a worker on one database, like createTestApp, with the runner replaceable: the real
 * runtime (against the scripted LLM servers) by default, a ScriptedRunner for queue-level tests.
 */
export interface TasksApp {
  kind: DbKind;
  c: Container;
  app: FastifyInstance;
  testEnv: TestEnv;
  keyA: string;
  keyB: string;
  orgA: string;
  req(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Creates an agent in org A through the API; returns its id. */
  createAgent(fields?: Record<string, unknown>): Promise<string>;
  /** Polls GET /v1/tasks/{id} until `done` holds. */
  waitTask(id: string, done: (t: Task) => boolean, timeoutMs?: number): Promise<Task>;
  close(): Promise<void>;
}

export async function createTasksApp(
  kind: DbKind,
  opts: { runner?: TaskRunner; env?: Record<string, string>; worker?: boolean } = {},
): Promise<TasksApp> {
  const testEnv = await createTestEnv(kind, { AGENTRY_EGRESS_ALLOW: '127.0.0.1', AGENTRY_TASK_LEASE_MS: '2000', ...opts.env });
  const config = loadConfig({ ...testEnv.env, AGENTRY_ROLES: 'api,worker' });
  const c = await createContainer(config, { log: createLogger(testEnv.env.AGENTRY_LOG_LEVEL), taskRunner: opts.runner });
  const app = await buildApiApp(c);
  if (opts.worker !== false) await c.taskWorker.start();
  const a = await c.orgs.createApiKey('org-a', 'test');
  const b = await c.orgs.createApiKey('org-b', 'test');
  const req: TasksApp['req'] = (method, url, body, headers) => {
    const h: Record<string, string> = { 'x-api-key': a.key, ...(headers ?? {}) };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) h['content-type'] = 'application/json';
    return app.inject({ method, url, payload, headers: h });
  };
  let agentN = 0;
  return {
    kind,
    c,
    app,
    testEnv,
    keyA: a.key,
    keyB: b.key,
    orgA: a.organization.id,
    req,
    async createAgent(fields = {}) {
      const r = await req('POST', '/v1/agents', { name: `agent ${++agentN} ${Math.random().toString(36).slice(2, 7)}`, ...fields });
      if (r.statusCode !== 201) throw new Error(`create agent: ${r.statusCode} ${r.body}`);
      return r.json().id as string;
    },
    async waitTask(id, done, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const r = await req('GET', `/v1/tasks/${encodeURIComponent(id)}`);
        if (r.statusCode !== 200) throw new Error(`get task: ${r.statusCode} ${r.body}`);
        const t = r.json() as Task;
        if (done(t)) return t;
        if (Date.now() > end) throw new Error(`task ${id} stayed ${t.status}`);
        await new Promise((res) => setTimeout(res, 50));
      }
    },
    async close() {
      await app.close();
      await c.close();
      await testEnv.cleanup();
    },
  };
}

/** An agent that talks to a scripted OpenAI-compatible server. */
export function openaiAgentFields(baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model_provider: 'openai',
    model_name: 'gpt-4o',
    llm_api_base: baseUrl,
    llm_credentials: { name: 'key', value: 'sk-test' },
    output_format: 'text',
    should_stage_before_publish: false,
    ...extra,
  };
}

/**
 * A TaskRunner for queue-level tests: each run calls the current handler, which can emit, wait for the abort
 * signal, or ask for approval through the RunRequest like the real runtime does.
 */
export class ScriptedRunner implements TaskRunner {
  readonly requests: RunRequest[] = [];
  handler: (req: RunRequest) => Promise<Partial<RunOutcome>> = async (req) => ({ result: `echo: ${req.task.input.text}` });

  async run(req: RunRequest): Promise<RunOutcome> {
    this.requests.push(req);
    const out = await this.handler(req);
    return {
      status: 'completed',
      result: '',
      tokens: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      messages: [
        { role: 'user', content: req.task.input.text, created_at: new Date().toISOString() },
        { role: 'assistant', content: out.result ?? '', created_at: new Date().toISOString() },
      ],
      llm_model_provider: 'scripted',
      llm_model_name: 'scripted-1',
      ...out,
    };
  }
}

/** Resolves when the signal aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}
