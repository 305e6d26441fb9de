import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { createSchedulesApp, type SchedulesApp } from './schedules-harness.js';

const prompt = (text = 'Write the daily report') => ({ input: { text } });

/** Schedules as a resource: CRUD, validation, organization isolation, pause and resume. */
describe.each(TEST_DBS)('schedules API (%s)', (kind) => {
  let t: SchedulesApp;
  let agent: string;
  beforeAll(async () => {
    t = await createSchedulesApp(kind, { start: '2026-03-01T12:00:00Z' });
    agent = await t.createAgent();
  });
  afterAll(async () => {
    await t?.close();
  });
  const url = (a = agent) => `/v1/agents/${a}/schedules`;

  it('creates a cron schedule with a time zone and shows its next run', async () => {
    const r = await t.req('POST', url(), { name: 'weekday report', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', invocation: prompt() });
    expect(r.statusCode).toBe(201);
    const s = r.json();
    expect(s).toMatchObject({
      agent_id: agent,
      organization_id: t.orgA,
      name: 'weekday report',
      kind: 'cron',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      interval_seconds: null,
      run_at: null,
      enabled: true,
      status: 'active',
      // 2026-03-01 is a Sunday; Monday 09:00 in Paris (UTC+1 in winter) is 08:00 UTC.
      next_run_at: '2026-03-02T08:00:00.000000+00:00',
      last_run_at: null,
      run_count: 0,
      skipped_count: 0,
      created_by: { type: 'api', task_id: null },
      invocation: { input: { text: 'Write the daily report', files: [] } },
    });
    expect((await t.req('GET', `${url()}/${s.id}`)).json()).toEqual(s);
  });

  it('creates interval and one-off schedules', async () => {
    const every = (await t.req('POST', url(), { interval_seconds: 3600, invocation: prompt() })).json();
    expect(every).toMatchObject({ kind: 'interval', interval_seconds: 3600, next_run_at: '2026-03-01T13:00:00.000000+00:00', timezone: null });
    const once = (await t.req('POST', url(), { run_at: '2026-03-05T10:30:00+02:00', invocation: prompt() })).json();
    expect(once).toMatchObject({ kind: 'once', run_at: '2026-03-05T08:30:00.000000+00:00', next_run_at: '2026-03-05T08:30:00.000000+00:00' });
  });

  it('refuses bad timings with 422 naming the field, and stores nothing', async () => {
    const before = (await t.req('GET', url())).json().total;
    const cases: [Record<string, unknown>, string[]][] = [
      [{ cron: '61 * * * *' }, ['body', 'cron']],
      [{ cron: '0 0 30 2 *' }, ['body', 'cron']],
      [{ cron: '0 0 * * * *' }, ['body', 'cron']],
      [{ cron: '0 9 * * *', timezone: 'Mars/Olympus' }, ['body', 'timezone']],
      [{ interval_seconds: 3600, timezone: 'UTC' }, ['body', 'timezone']],
      [{ interval_seconds: 59 }, ['body', 'interval_seconds']],
      [{ run_at: '2026-03-01T11:59:00Z' }, ['body', 'run_at']],
      [{ run_at: '2026-03-05T10:30:00' }, ['body', 'run_at']],
      [{}, ['body']],
      [{ cron: '0 9 * * *', interval_seconds: 3600 }, ['body']],
    ];
    for (const [timing, loc] of cases) {
      const r = await t.req('POST', url(), { ...timing, invocation: prompt() });
      expect(r.statusCode, JSON.stringify(timing)).toBe(422);
      expect(r.json().detail[0].loc, JSON.stringify(timing)).toEqual(loc);
    }
    const extra = await t.req('POST', url(), { cron: '0 9 * * *', invocation: { ...prompt(), id: 'x' } });
    expect(extra.statusCode).toBe(422);
    expect(extra.json().detail[0]).toMatchObject({ loc: ['body', 'invocation', 'id'], type: 'extra_forbidden' });
    // End-user tokens are not kept by a schedule (invoke takes them; the per-user token store serves scheduled runs).
    const tokens = await t.req('POST', url(), { cron: '0 9 * * *', invocation: { ...prompt(), user_tokens: { mcp: 't' } } });
    expect(tokens.statusCode).toBe(422);
    expect(tokens.json().detail[0]).toMatchObject({ loc: ['body', 'invocation', 'user_tokens'], type: 'extra_forbidden' });
    const empty = await t.req('POST', url(), { cron: '0 9 * * *', invocation: prompt('') });
    expect(empty.json().detail[0].loc).toEqual(['body', 'invocation', 'input', 'text']);
    const nul = await t.req('POST', url(), { cron: '0 9 * * *', invocation: prompt('a\u0000b') });
    expect(nul.statusCode).toBe(422);
    expect((await t.req('GET', url())).json().total).toBe(before);
  });

  it('answers another organization and unknown agents with 404', async () => {
    const s = (await t.req('POST', url(), { interval_seconds: 600, invocation: prompt() })).json();
    const asB = { 'x-api-key': t.keyB };
    expect((await t.req('GET', `${url()}/${s.id}`, undefined, asB)).json()).toEqual({ detail: 'Agent not found' });
    expect((await t.req('PATCH', `${url()}/${s.id}`, { name: 'x' }, asB)).statusCode).toBe(404);
    expect((await t.req('DELETE', `${url()}/${s.id}`, undefined, asB)).statusCode).toBe(404);
    expect((await t.req('GET', '/v1/schedules', undefined, asB)).json().total).toBe(0);
    expect((await t.req('GET', `${url('nope')}`)).json()).toEqual({ detail: 'Agent not found' });
    const other = await t.createAgent();
    expect((await t.req('GET', `${url(other)}/${s.id}`)).json()).toEqual({ detail: 'Schedule not found' });
  });

  it('pauses and resumes; PATCH changes timing and prompt', async () => {
    const s = (await t.req('POST', url(), { cron: '*/15 * * * *', invocation: prompt() })).json();
    const paused = (await t.req('POST', `${url()}/${s.id}/pause`)).json();
    expect(paused).toMatchObject({ enabled: false, status: 'paused', next_run_at: null });
    t.clock.set('2026-03-01T12:20:00Z');
    const resumed = (await t.req('POST', `${url()}/${s.id}/resume`)).json();
    expect(resumed).toMatchObject({ enabled: true, status: 'active', next_run_at: '2026-03-01T12:30:00.000000+00:00' });
    const patched = await t.req('PATCH', `${url()}/${s.id}`, { timezone: 'Asia/Kolkata', cron: '0 9 * * *', invocation: prompt('new prompt') });
    expect(patched.json()).toMatchObject({ cron: '0 9 * * *', timezone: 'Asia/Kolkata', next_run_at: '2026-03-02T03:30:00.000000+00:00', invocation: { input: { text: 'new prompt' } } });
    const toInterval = (await t.req('PATCH', `${url()}/${s.id}`, { interval_seconds: 120 })).json();
    expect(toInterval).toMatchObject({ kind: 'interval', cron: null, timezone: null, interval_seconds: 120, next_run_at: '2026-03-01T12:22:00.000000+00:00' });
    expect((await t.req('PATCH', `${url()}/${s.id}`, { timezone: 'UTC' })).statusCode).toBe(422);
    expect((await t.req('PATCH', `${url()}/${s.id}`, { enabled: false })).json().status).toBe('paused');
    expect((await t.req('DELETE', `${url()}/${s.id}`)).statusCode).toBe(204);
    expect((await t.req('GET', `${url()}/${s.id}`)).statusCode).toBe(404);
  });

  it('lists per agent and across the organization, paged, with filters', async () => {
    const other = await t.createAgent();
    await t.req('POST', url(other), { interval_seconds: 600, invocation: prompt() });
    const all = (await t.req('GET', '/v1/schedules?per_page=50')).json();
    expect(all.items.some((s: { agent_id: string }) => s.agent_id === other)).toBe(true);
    expect(all.items.some((s: { agent_id: string }) => s.agent_id === agent)).toBe(true);
    const one = (await t.req('GET', `/v1/schedules?agent_id=${other}`)).json();
    expect(one.total).toBe(1);
    expect((await t.req('GET', url(other))).json()).toMatchObject({ total: 1, page: 1, per_page: 20, total_pages: 1 });
    expect((await t.req('GET', '/v1/schedules?created_by=agent')).json().total).toBe(0);
  });
});
