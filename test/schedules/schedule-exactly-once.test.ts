import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { createSchedulesApp, type SchedulesApp } from './schedules-harness.js';

const SCHEDULES = 12;
const ROUNDS = 6;

/** A scheduler in another process on the test's database (two connections in one thread would wait on each other's lock). */
async function schedulerProcess(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'scheduler-process.ts')], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  expect((await lines.next()).value).toBe('ready');
  return {
    async tick(at: number): Promise<number> {
      child.stdin!.write(`tick ${at}\n`);
      return JSON.parse((await lines.next()).value as string).fired;
    },
    async exit() {
      child.stdin!.write('exit\n');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/**
 * Three worker processes (two children and the test's own) scan one database at the same moments: every occurrence
 * becomes exactly one task, and none is left behind.
 */
describe.each(TEST_DBS)('schedules fire exactly once across processes (%s)', (kind) => {
  let t: SchedulesApp;
  let others: Awaited<ReturnType<typeof schedulerProcess>>[];
  let agent: string;
  beforeAll(async () => {
    t = await createSchedulesApp(kind, { start: '2026-04-01T00:00:00Z' });
    others = await Promise.all([schedulerProcess(t.testEnv.env), schedulerProcess(t.testEnv.env)]);
    agent = await t.createAgent();
  }, 60_000);
  afterAll(async () => {
    for (const o of others ?? []) await o.exit();
    await t?.close();
  });

  it('never fires one occurrence twice', async () => {
    const ids: string[] = [];
    for (let i = 0; i < SCHEDULES; i++) {
      const r = await t.req('POST', `/v1/agents/${agent}/schedules`, { interval_seconds: 60, invocation: { input: { text: `job ${i}` } } });
      ids.push(r.json().id);
    }
    let fired = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      t.clock.advance(60_000);
      const counts = await Promise.all([t.c.scheduler.tick(), ...others.map((o) => o.tick(t.clock.t))]);
      fired += counts.reduce((a, b) => a + b, 0);
      // Every occurrence of the round was fired by one of them (none failed and was left for later).
      expect(fired).toBe(round * SCHEDULES);
    }
    for (const id of ids) {
      const tasks = (await t.req('GET', `/v1/agents/${agent}/schedules/${id}/tasks?per_page=50`)).json();
      expect(tasks.total).toBe(ROUNDS);
      const occ = (await t.req('GET', `/v1/agents/${agent}/schedules/${id}/occurrences?per_page=50`)).json().items;
      expect(new Set(occ.map((o: { due_at: string }) => o.due_at)).size).toBe(ROUNDS);
      expect(new Set(occ.map((o: { task_id: string }) => o.task_id))).toEqual(new Set(tasks.items.map((x: { id: string }) => x.id)));
    }
    const all = (await t.req('GET', `/v1/tasks?source=schedule&agent_id=${agent}&per_page=1`)).json();
    expect(all.total).toBe(SCHEDULES * ROUNDS);
  }, 60_000);
});
