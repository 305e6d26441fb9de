import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { TEST_DBS } from '../support/harness.js';
import { createSchedulesApp, type SchedulesApp } from './schedules-harness.js';

const HOUR = 3_600_000;

/**
 * Firing with a manual clock and no task worker (the tasks stay pending): each occurrence makes one ordinary task
 * with source `schedule`, at the times the timing says, and missed occurrences catch up once.
 */
describe.each(TEST_DBS)('schedule firing (%s)', (kind) => {
  let t: SchedulesApp;
  let agent: string;
  beforeAll(async () => {
    t = await createSchedulesApp(kind, { start: '2026-03-01T12:00:00Z' });
    agent = await t.createAgent({ output_format: 'text' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const create = async (body: Record<string, unknown>, a = agent) => {
    const r = await t.req('POST', `/v1/agents/${a}/schedules`, { invocation: { input: { text: 'scheduled hello', user: { id: 'u-7' } }, additional_context: 'ctx' }, ...body });
    expect(r.statusCode, r.body).toBe(201);
    return r.json();
  };
  const get = async (id: string, a = agent) => (await t.req('GET', `/v1/agents/${a}/schedules/${id}`)).json();
  const tasksOf = async (id: string, a = agent): Promise<Task[]> => (await t.req('GET', `/v1/agents/${a}/schedules/${id}/tasks?per_page=50`)).json().items;
  const occurrences = async (id: string, a = agent) => (await t.req('GET', `/v1/agents/${a}/schedules/${id}/occurrences?per_page=50`)).json().items;
  /** Moves the clock to `iso` and runs one scheduler scan. */
  const at = async (iso: string) => {
    t.clock.set(iso);
    return t.c.scheduler.tick();
  };

  it('an interval schedule fires once per period, making ordinary scheduled tasks', async () => {
    t.clock.set('2026-03-01T12:00:00Z');
    const s = await create({ interval_seconds: 3600 });
    await at('2026-03-01T12:59:59Z');
    expect(await tasksOf(s.id)).toHaveLength(0);
    await at('2026-03-01T13:00:00Z');
    await at('2026-03-01T13:00:30Z');
    const tasks = await tasksOf(s.id);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      agent_id: agent,
      source: 'schedule',
      schedule_id: s.id,
      status: 'pending',
      input: { text: 'scheduled hello', user: { id: 'u-7' } },
      additional_context: 'ctx',
      output_format: 'text',
      created_at: '2026-03-01T13:00:00.000000+00:00',
    });
    // An ordinary task: in the agent's list, the organization's (filter by source) and readable by id.
    expect((await t.req('GET', `/v1/tasks?source=schedule&agent_id=${agent}`)).json().items.map((x: Task) => x.id)).toContain(tasks[0]!.id);
    expect((await t.req('GET', `/v1/tasks/${tasks[0]!.id}`)).json()).toMatchObject({ schedule_id: s.id, source: 'schedule' });
    expect(await get(s.id)).toMatchObject({ run_count: 1, last_task_id: tasks[0]!.id, last_outcome: 'started', next_run_at: '2026-03-01T14:00:00.000000+00:00', last_run_at: '2026-03-01T13:00:00.000000+00:00' });
    await at('2026-03-01T14:00:05Z');
    expect(await tasksOf(s.id)).toHaveLength(2);
    // The rhythm stays on the hour although the last one fired 5 s late.
    expect((await get(s.id)).next_run_at).toBe('2026-03-01T15:00:00.000000+00:00');
    await t.req('DELETE', `/v1/agents/${agent}/schedules/${s.id}`);
  });

  it('a one-off fires once, then is finished', async () => {
    t.clock.set('2026-03-02T00:00:00Z');
    const s = await create({ run_at: '2026-03-02T06:00:00Z' });
    await at('2026-03-02T05:59:00Z');
    expect(await tasksOf(s.id)).toHaveLength(0);
    await at('2026-03-02T06:00:01Z');
    await at('2026-03-03T06:00:00Z');
    expect(await tasksOf(s.id)).toHaveLength(1);
    expect(await get(s.id)).toMatchObject({ status: 'finished', next_run_at: null, run_count: 1 });
    // Resuming a finished one-off does not run it again.
    expect((await t.req('POST', `/v1/agents/${agent}/schedules/${s.id}/pause`)).statusCode).toBe(200);
    expect((await t.req('POST', `/v1/agents/${agent}/schedules/${s.id}/resume`)).json()).toMatchObject({ status: 'finished' });
    await at('2026-03-04T06:00:00Z');
    expect(await tasksOf(s.id)).toHaveLength(1);
  });

  it('an invocation with disable_attachment_injection makes tasks that carry it to the runtime', async () => {
    t.clock.set('2026-03-05T00:00:00Z');
    const flagOf = async (id: string) =>
      (await t.c.db.kysely.selectFrom('tasks').select('disable_attachment_injection').where('id', '=', id).executeTakeFirstOrThrow()).disable_attachment_injection;
    const on = await create({ run_at: '2026-03-05T06:00:00Z', invocation: { input: { text: 'links only', files: ['https://example.com/a.pdf'] }, disable_attachment_injection: true } });
    const off = await create({ run_at: '2026-03-05T06:00:00Z' });
    expect(on.invocation.disable_attachment_injection).toBe(true);
    await at('2026-03-05T06:00:01Z');
    expect(Number(await flagOf((await tasksOf(on.id))[0]!.id))).toBe(1);
    expect(Number(await flagOf((await tasksOf(off.id))[0]!.id))).toBe(0);
  });

  it('a cron schedule follows its time zone across a daylight-saving change', async () => {
    // New York springs forward on 2026-03-08: 09:00 local is 14:00 UTC before and 13:00 UTC after.
    t.clock.set('2026-03-06T00:00:00Z');
    const s = await create({ cron: '0 9 * * *', timezone: 'America/New_York' });
    const fired: string[] = [];
    for (let h = 0; h < 5 * 24; h++) {
      t.clock.advance(HOUR);
      await t.c.scheduler.tick();
    }
    for (const task of await tasksOf(s.id)) fired.push(task.created_at);
    expect(fired.sort()).toEqual([
      '2026-03-06T14:00:00.000000+00:00',
      '2026-03-07T14:00:00.000000+00:00',
      '2026-03-08T13:00:00.000000+00:00',
      '2026-03-09T13:00:00.000000+00:00',
      '2026-03-10T13:00:00.000000+00:00',
    ]);
    await t.req('DELETE', `/v1/agents/${agent}/schedules/${s.id}`);
  });

  it('a local time repeated by the fall-back change runs once', async () => {
    // New York falls back on 2026-11-01: 01:30 happens at 05:30 UTC (EDT) and again at 06:30 UTC (EST).
    t.clock.set('2026-10-31T12:00:00Z');
    const s = await create({ cron: '30 1 * * *', timezone: 'America/New_York' });
    for (let k = 0; k < 4 * 48; k++) {
      t.clock.advance(HOUR / 4);
      await t.c.scheduler.tick();
    }
    expect((await tasksOf(s.id)).map((x) => x.created_at).sort()).toEqual(['2026-11-01T05:30:00.000000+00:00', '2026-11-02T06:30:00.000000+00:00']);
    await t.req('DELETE', `/v1/agents/${agent}/schedules/${s.id}`);
  });

  it('a local time skipped by the spring-forward change runs once, at the first valid time after it', async () => {
    t.clock.set('2026-03-07T12:00:00Z');
    const s = await create({ cron: '30 2 * * *', timezone: 'America/New_York' });
    // 02:30 does not exist on 2026-03-08 in New York: it runs at 03:00 EDT (07:00 UTC).
    expect((await get(s.id)).next_run_at).toBe('2026-03-08T07:00:00.000000+00:00');
    await t.req('DELETE', `/v1/agents/${agent}/schedules/${s.id}`);
  });

  it('after downtime, missed occurrences run once on catch-up, not as a burst', async () => {
    t.clock.set('2026-03-10T00:00:00Z');
    const s = await create({ cron: '*/10 * * * *' });
    await at('2026-03-10T00:10:00Z');
    expect(await tasksOf(s.id)).toHaveLength(1);
    // No scheduler ran for five hours: 30 occurrences were missed.
    await at('2026-03-10T05:07:00Z');
    await at('2026-03-10T05:08:00Z');
    expect(await tasksOf(s.id)).toHaveLength(2);
    const occ = await occurrences(s.id);
    expect(occ[0]).toMatchObject({ due_at: '2026-03-10T00:20:00.000000+00:00', fired_at: '2026-03-10T05:07:00.000000+00:00', outcome: 'started' });
    expect((await get(s.id)).next_run_at).toBe('2026-03-10T05:10:00.000000+00:00');
    await t.req('DELETE', `/v1/agents/${agent}/schedules/${s.id}`);
  });

  it('a paused schedule does not fire; resumed, it continues from now', async () => {
    t.clock.set('2026-03-11T00:00:00Z');
    const s = await create({ interval_seconds: 600 });
    await t.req('POST', `/v1/agents/${agent}/schedules/${s.id}/pause`);
    await at('2026-03-11T01:00:00Z');
    expect(await tasksOf(s.id)).toHaveLength(0);
    const resumed = (await t.req('POST', `/v1/agents/${agent}/schedules/${s.id}/resume`)).json();
    expect(resumed.next_run_at).toBe('2026-03-11T01:10:00.000000+00:00');
    await at('2026-03-11T01:10:00Z');
    expect(await tasksOf(s.id)).toHaveLength(1);
    await t.req('DELETE', `/v1/agents/${agent}/schedules/${s.id}`);
  });

  it('honours max_runs_per_day: an occurrence over the limit is recorded as skipped', async () => {
    const limited = await t.createAgent({ task_level_strategies: { max_runs_per_day: 2 } });
    t.clock.set('2026-03-12T00:00:00Z');
    const s = await create({ interval_seconds: 3600 }, limited);
    for (const h of ['01', '02', '03', '04']) await at(`2026-03-12T${h}:00:00Z`);
    expect(await tasksOf(s.id, limited)).toHaveLength(2);
    const occ = await occurrences(s.id, limited);
    expect(occ.map((o: { outcome: string }) => o.outcome)).toEqual(['skipped_daily_limit', 'skipped_daily_limit', 'started', 'started']);
    expect(occ[0].detail).toMatch(/limit of 2 runs per day/);
    expect(await get(s.id, limited)).toMatchObject({ run_count: 2, skipped_count: 2, last_outcome: 'skipped_daily_limit', last_task_id: null, status: 'active' });
    // A new UTC day: runs again.
    await at('2026-03-13T00:00:00Z');
    expect(await tasksOf(s.id, limited)).toHaveLength(3);
  });

  it('a schedule made through the API needs the agent\'s developer access, when made and when it fires', async () => {
    const a = await t.createAgent();
    t.clock.set('2026-03-15T00:00:00Z');
    const s = await create({ interval_seconds: 3600 }, a);
    expect((await t.req('PATCH', `/v1/agents/${a}`, { developer_access: false })).statusCode).toBe(200);
    await at('2026-03-15T01:00:00Z');
    expect(await tasksOf(s.id, a)).toHaveLength(0);
    expect((await occurrences(s.id, a))[0]).toMatchObject({ outcome: 'skipped_refused', detail: 'Developer access is disabled for this agent' });
    const refused = await t.req('POST', `/v1/agents/${a}/schedules`, { interval_seconds: 3600, invocation: { input: { text: 'x' } } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ detail: 'Developer access is disabled for this agent' });
  });

  it('an inactive agent skips its occurrences; a deleted one pauses its schedules', async () => {
    const a = await t.createAgent();
    t.clock.set('2026-03-14T00:00:00Z');
    const s = await create({ interval_seconds: 3600 }, a);
    expect((await t.req('PATCH', `/v1/agents/${a}`, { status: 'INACTIVE' })).statusCode).toBe(200);
    await at('2026-03-14T01:00:00Z');
    expect(await get(s.id, a)).toMatchObject({ last_outcome: 'skipped_agent_inactive', skipped_count: 1, status: 'active' });
    expect((await t.req('DELETE', `/v1/agents/${a}`)).statusCode).toBe(202);
    await at('2026-03-14T02:00:00Z');
    const left = (await t.req('GET', `/v1/schedules?agent_id=${a}`)).json().items[0];
    expect(left).toMatchObject({ id: s.id, last_outcome: 'skipped_agent_missing', status: 'paused', skipped_count: 2 });
  });
});

describe.each(TEST_DBS)('schedule occurrences retention (%s)', (kind) => {
  it('keeps only the newest occurrences of a schedule', async () => {
    const { SchedulesRepository } = await import('../../src/schedules/schedules.repository.js');
    const t = await createSchedulesApp(kind);
    try {
      const agent = await t.createAgent();
      const s = (await t.req('POST', `/v1/agents/${agent}/schedules`, { interval_seconds: 60, invocation: { input: { text: 'x' } } })).json();
      const repo = new SchedulesRepository(t.c.db, 3);
      for (let k = 1; k <= 5; k++) {
        await repo.transaction((trx) => repo.record(trx, t.orgA, s.id, { dueAt: k * 60_000, firedAt: k * 60_000, next: null, outcome: 'started', taskId: `t${k}`, detail: null, started: true }));
      }
      const rows = await repo.occurrences(t.orgA, s.id, 0, 50);
      expect(rows.map((r) => r.task_id)).toEqual(['t5', 't4', 't3']);
      expect((await t.req('GET', `/v1/agents/${agent}/schedules/${s.id}`)).json().run_count).toBe(5);
    } finally {
      await t.close();
    }
  });
});
