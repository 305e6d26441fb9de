import { createContainer, type Container } from '../../src/container.js';
import type { Clock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestApp, type DbKind, type TestApp } from '../support/harness.js';

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

export interface SchedulesApp extends TestApp {
  clock: ManualClock;
  /** Another container (as another process would be) on the same database, with its own scheduler and clock. */
  another(clock: Clock): Promise<Container>;
}

/**
 * An in-process API on one database with a manual clock (createTestApp with options). The scheduler is not started:
 * tests call `c.scheduler.tick()` after moving the clock. The task worker runs only with `worker: true`.
 */
export async function createSchedulesApp(kind: DbKind, opts: { worker?: boolean; env?: Record<string, string>; start?: string } = {}): Promise<SchedulesApp> {
  const clock = new ManualClock(Date.parse(opts.start ?? '2026-03-01T12:00:00Z'));
  const base = await createTestApp(kind, {
    roles: 'api,worker',
    env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1', ...opts.env },
    clock,
    startWorker: opts.worker === true,
    agentDefaults: { should_stage_before_publish: false },
    agentPrefix: 'sched-agent',
  });
  const log = createLogger(base.testEnv.env.AGENTRY_LOG_LEVEL);
  const others: Container[] = [];
  return {
    ...base,
    clock,
    async another(otherClock) {
      const other = await createContainer(base.config, { clock: otherClock, log });
      others.push(other);
      return other;
    },
    async close() {
      for (const o of others) await o.close();
      await base.close();
    },
  };
}
