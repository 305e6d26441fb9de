import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { buildApiApp } from '../../src/http/api.app.js';
import type { Clock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestEnv, type DbKind, type TestEnv } from '../support/harness.js';

/** A clock the test moves by hand: schedules come due only when the test says so. */
export class ManualClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  set(iso: string): void {
    this.t = Date.parse(iso);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface SchedulesApp {
  kind: DbKind;
  c: Container;
  app: FastifyInstance;
  testEnv: TestEnv;
  clock: ManualClock;
  keyA: string;
  keyB: string;
  orgA: string;
  req(method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  createAgent(fields?: Record<string, unknown>): Promise<string>;
  /** Another container (as another process would be) on the same database, with its own scheduler and clock. */
  another(clock: Clock): Promise<Container>;
  close(): Promise<void>;
}

/**
 * An in-process API on one database with a manual clock. The scheduler is not started: tests call
 * `c.scheduler.tick()` after moving the clock. The task worker runs only with `worker: true`.
 */
export async function createSchedulesApp(kind: DbKind, opts: { worker?: boolean; env?: Record<string, string>; start?: string } = {}): Promise<SchedulesApp> {
  const testEnv = await createTestEnv(kind, { AGENTRY_EGRESS_ALLOW: '127.0.0.1', ...opts.env });
  const config = loadConfig({ ...testEnv.env, AGENTRY_ROLES: 'api,worker' });
  const clock = new ManualClock(Date.parse(opts.start ?? '2026-03-01T12:00:00Z'));
  const log = createLogger(testEnv.env.AGENTRY_LOG_LEVEL);
  const c = await createContainer(config, { clock, log });
  const app = await buildApiApp(c);
  if (opts.worker) await c.taskWorker.start();
  const a = await c.orgs.createApiKey('org-a', 'test');
  const b = await c.orgs.createApiKey('org-b', 'test');
  const others: Container[] = [];
  const req: SchedulesApp['req'] = (method, url, body, headers) => {
    const h: Record<string, string> = { 'x-api-key': a.key, ...(headers ?? {}) };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) h['content-type'] = 'application/json';
    return app.inject({ method, url, payload, headers: h });
  };
  let n = 0;
  return {
    kind,
    c,
    app,
    testEnv,
    clock,
    keyA: a.key,
    keyB: b.key,
    orgA: a.organization.id,
    req,
    async createAgent(fields = {}) {
      const r = await req('POST', '/v1/agents', { name: `sched agent ${++n} ${Math.random().toString(36).slice(2, 7)}`, should_stage_before_publish: false, ...fields });
      if (r.statusCode !== 201) throw new Error(`create agent: ${r.statusCode} ${r.body}`);
      return r.json().id as string;
    },
    async another(otherClock) {
      const other = await createContainer(config, { clock: otherClock, log });
      others.push(other);
      return other;
    },
    async close() {
      await app.close();
      for (const o of others) await o.close();
      await c.close();
      await testEnv.cleanup();
    },
  };
}
