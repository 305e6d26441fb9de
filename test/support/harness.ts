import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { buildApiApp } from '../../src/http/api.app.js';
import { buildWebhookApp } from '../../src/http/webhooks.app.js';
import { createLogger, type Logger } from '../../src/lib/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createPgDatabase } from './databases.js';
import { injectPoster, postAgent } from './agents.js';
import type { Clock } from '../../src/lib/clock.js';
import type { TaskRunner } from '../../src/runtime/task-runner.js';
import type { Task } from '../../src/tasks/task.types.js';

export { TEST_DBS } from './databases.js';
export type DbKind = 'sqlite' | 'postgres';

export interface TestEnv {
  kind: DbKind;
  dataDir: string;
  /** Environment the app was configured with (reuse it to start more processes on the same database). */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** A data directory and (for PostgreSQL) a fresh database. */
export async function createTestEnv(kind: DbKind, extraEnv: Record<string, string> = {}): Promise<TestEnv> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentry-test-'));
  const pgdb = kind === 'postgres' ? await createPgDatabase() : undefined;
  const env: Record<string, string> = {
    AGENTRY_DATA_DIR: dataDir,
    AGENTRY_LOG_LEVEL: process.env.AGENTRY_TEST_LOG_LEVEL ?? 'silent',
    AGENTRY_MASTER_KEY: 'a'.repeat(64),
    ...(pgdb ? { DATABASE_URL: pgdb.url } : {}),
    // Suites send bursts far above the production defaults; test/auth/rate-limits.test.ts sets its own limits.
    AGENTRY_RATE_LIMIT_KEY_PER_SECOND: '1000000',
    AGENTRY_RATE_LIMIT_KEY_BURST: '1000000',
    AGENTRY_RATE_LIMIT_WEBHOOK_PER_SECOND: '1000000',
    AGENTRY_RATE_LIMIT_WEBHOOK_BURST: '1000000',
    ...extraEnv,
  };
  return {
    kind,
    dataDir,
    env,
    async cleanup() {
      await pgdb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestApp {
  kind: DbKind;
  c: Container;
  app: FastifyInstance;
  webhooks: FastifyInstance;
  config: Config;
  testEnv: TestEnv;
  /** Two organizations with one key each: A is the caller, B the stranger. */
  keyA: string;
  keyB: string;
  orgA: string;
  orgB: string;
  /** inject with org A's key unless headers say otherwise */
  req(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** Creates an agent in org A through the API (a unique name unless `fields` has one); returns its id. */
  createAgent(fields?: Record<string, unknown>): Promise<string>;
  /** Polls GET /v1/tasks/{id} with org A's key until `done` holds (default: the task is final). */
  waitTask(id: string, done?: (t: Task) => boolean, timeoutMs?: number): Promise<Task>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  config?: Partial<Config>;
  /** AGENTRY_ROLES of the container; default `api,webhooks`. */
  roles?: string;
  /** Replaces the runtime's TaskRunner (queue-level tests). */
  runner?: TaskRunner;
  /** The container's clock (a ManualClock for schedules). */
  clock?: Clock;
  /** Starts the task worker (with a role list that has `worker`). */
  startWorker?: boolean;
  /** Fields every createAgent call starts from (the test's own fields win). */
  agentDefaults?: Record<string, unknown>;
  /** Prefix of the generated agent names. */
  agentPrefix?: string;
}

const FINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'error', 'stopped']);

/**
 * An in-process app (Fastify inject) on the given database, with two organizations: the one app harness of the
 * suite. test/tasks/tasks-harness.ts (a worker, a replaceable runner) and test/schedules/schedules-harness.ts (a
 * manual clock) are this with options.
 */
export async function createTestApp(kind: DbKind, opts: TestAppOptions = {}): Promise<TestApp> {
  const testEnv = await createTestEnv(kind, opts.env);
  const config = loadConfig({ ...testEnv.env, AGENTRY_ROLES: opts.roles ?? 'api,webhooks' }, opts.config);
  const c = await createContainer(config, { log: createLogger(testEnv.env.AGENTRY_LOG_LEVEL), taskRunner: opts.runner, clock: opts.clock });
  const app = await buildApiApp(c);
  const webhooks = await buildWebhookApp(c);
  if (opts.startWorker) await c.taskWorker.start();
  const a = await c.orgs.createApiKey('org-a', 'test');
  const b = await c.orgs.createApiKey('org-b', 'test');
  const req: TestApp['req'] = (method, url, body, headers) => {
    const h: Record<string, string> = { 'x-api-key': a.key, ...(headers ?? {}) };
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    if (payload !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['content-type'] = 'application/json';
    return app.inject({ method, url, payload, headers: h });
  };
  const poster = injectPoster(req);
  return {
    kind,
    c,
    app,
    webhooks,
    config,
    testEnv,
    keyA: a.key,
    keyB: b.key,
    orgA: a.organization.id,
    orgB: b.organization.id,
    req,
    async createAgent(fields = {}) {
      return (await postAgent(poster, { ...opts.agentDefaults, ...fields }, opts.agentPrefix)).id as string;
    },
    async waitTask(id, done = (t) => FINAL.has(t.status), timeoutMs = 20_000) {
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
      await webhooks.close();
      for (const bg of c.background) await bg.stop();
      await c.close();
      await testEnv.cleanup();
    },
  };
}

/** A real server on ephemeral ports (for socket-level and end-to-end tests); `log` to read its log (captureLog). */
export async function startTestServer(testEnv: TestEnv, env: Record<string, string> = {}, log?: Logger): Promise<RunningServer> {
  const config = loadConfig({ ...testEnv.env, AGENTRY_API_PORT: '0', AGENTRY_WEBHOOK_PORT: '0', ...env });
  return startServer(config, await createContainer(config, { log: log ?? createLogger(testEnv.env.AGENTRY_LOG_LEVEL) }));
}
