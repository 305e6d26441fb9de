import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { openaiAgentFields } from '../tasks/tasks-harness.js';
import type { Task, TaskEvent } from '../../src/tasks/task.types.js';
import { createSchedulesApp, type SchedulesApp } from './schedules-harness.js';

/** The self-scheduling tools, called by a scripted model through the real runtime and worker. */
describe.each(TEST_DBS)('self-scheduling agents (%s)', (kind) => {
  let t: SchedulesApp;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    t = await createSchedulesApp(kind, { worker: true, start: '2026-05-01T08:00:00Z' });
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  const invoke = async (agent: string, text: string): Promise<Task> => {
    const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text, user: { id: 'u-9' } } });
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };
  const toolResults = async (taskId: string) =>
    ((await t.req('GET', `/v1/tasks/${taskId}/events`)).json() as TaskEvent[]).filter((e) => e.type === 'tool_call_result').map((e) => e.data);
  const selfMade = async (agent: string) => (await t.req('GET', `/v1/agents/${agent}/schedules?created_by=agent`)).json();

  it('is not offered without can_self_schedule', async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl));
    llm.reply({ text: 'ok' });
    await invoke(agent, 'hi');
    expect(llm.requests[llm.requests.length - 1]!.tools).not.toContain('schedule_self_run');
  });

  it('schedules a future run of itself, which fires as a scheduled task with its prompt', async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { can_self_schedule: true, max_self_schedules: 2 }));
    llm.reply({ toolCalls: [{ name: 'schedule_self_run', arguments: { prompt: 'Check the build again', run_at: '2026-05-01T09:00:00+00:00', name: 'recheck' } }] }, { text: 'Scheduled.' });
    const task = await invoke(agent, 'The build is red; look again in an hour.');
    expect(task).toMatchObject({ status: 'completed', result: 'Scheduled.' });
    expect(llm.requests[llm.requests.length - 2]!.tools).toEqual(expect.arrayContaining(['schedule_self_run', 'list_self_schedules', 'cancel_self_schedule']));

    // In the trace, and in the schedule list with who made it.
    const [result] = await toolResults(task.id);
    expect(result).toMatchObject({ tool_name: 'schedule_self_run', is_error: false, result: { kind: 'once', next_run_at: '2026-05-01T09:00:00.000000+00:00', created_by_task_id: task.id } });
    const list = await selfMade(agent);
    expect(list.total).toBe(1);
    expect(list.items[0]).toMatchObject({ name: 'recheck', kind: 'once', created_by: { type: 'agent', task_id: task.id }, invocation: { input: { text: 'Check the build again', user: { id: 'u-9' } } } });

    llm.reply({ text: 'Still red.' });
    t.clock.set('2026-05-01T09:00:00Z');
    expect(await t.c.scheduler.tick()).toBe(1);
    const scheduled = (await t.req('GET', `/v1/agents/${agent}/schedules/${list.items[0].id}/tasks`)).json().items[0];
    expect(scheduled).toMatchObject({ source: 'schedule', schedule_id: list.items[0].id, input: { text: 'Check the build again' } });
    const done = await waitTask(t, scheduled.id);
    expect(done).toMatchObject({ status: 'completed', result: 'Still red.' });
  });

  it('refuses beyond max_self_schedules with a clear tool error; lists and cancels its own', async () => {
    t.clock.set('2026-05-02T08:00:00Z');
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { can_self_schedule: true, max_self_schedules: 2 }));
    const byApi = (await t.req('POST', `/v1/agents/${agent}/schedules`, { interval_seconds: 3600, invocation: { input: { text: 'made by a person' } } })).json();
    llm.reply(
      {
        toolCalls: [
          { name: 'schedule_self_run', arguments: { prompt: 'daily digest', cron: '0 7 * * *', timezone: 'Europe/Berlin' } },
          { name: 'schedule_self_run', arguments: { prompt: 'hourly check', interval_seconds: 3600 } },
          { name: 'schedule_self_run', arguments: { prompt: 'one too many', interval_seconds: 7200 } },
          { name: 'schedule_self_run', arguments: { prompt: 'bad zone', cron: '0 7 * * *', timezone: 'Nowhere/City' } },
        ],
      },
      { text: 'Done.' },
    );
    const task = await invoke(agent, 'Set up your routines.');
    expect(task.status).toBe('completed');
    const results = await toolResults(task.id);
    expect(results.map((r) => r.is_error)).toEqual([false, false, true, true]);
    expect(String(results[2]!.result)).toMatch(/2 active schedules you made \(max_self_schedules\)/);
    expect(String(results[3]!.result)).toMatch(/timezone: .*Unknown time zone "Nowhere\/City"/);
    const mine = await selfMade(agent);
    expect(mine.total).toBe(2);
    expect((await t.req('GET', `/v1/agents/${agent}/schedules`)).json().total).toBe(3);

    // Lists its own (not the one a person made), cancels one, and may then schedule again; a person's is not its own.
    const digest = mine.items.find((s: { invocation: { input: { text: string } } }) => s.invocation.input.text === 'daily digest');
    llm.reply(
      {
        toolCalls: [
          { name: 'list_self_schedules', arguments: {} },
          { name: 'cancel_self_schedule', arguments: { schedule_id: byApi.id } },
          { name: 'cancel_self_schedule', arguments: { schedule_id: digest.id } },
          { name: 'schedule_self_run', arguments: { prompt: 'fits now', interval_seconds: 7200 } },
        ],
      },
      { text: 'Tidied.' },
    );
    const second = await invoke(agent, 'Tidy your schedules.');
    const r2 = await toolResults(second.id);
    expect(r2.map((r) => r.is_error)).toEqual([false, true, false, false]);
    expect((r2[0]!.result as { prompt: string }[]).map((s) => s.prompt).sort()).toEqual(['daily digest', 'hourly check']);
    expect(String(r2[1]!.result)).toMatch(/Schedule not found/);
    const after = await selfMade(agent);
    expect(after.items.map((s: { invocation: { input: { text: string } } }) => s.invocation.input.text).sort()).toEqual(['fits now', 'hourly check']);
    expect(after.items.find((s: { invocation: { input: { text: string } } }) => s.invocation.input.text === 'fits now').created_by).toEqual({ type: 'agent', task_id: second.id });
    expect((await t.req('GET', `/v1/agents/${agent}/schedules/${byApi.id}`)).statusCode).toBe(200);
  });
});

async function waitTask(t: SchedulesApp, id: string): Promise<Task> {
  const end = Date.now() + 20_000;
  for (;;) {
    const task = (await t.req('GET', `/v1/tasks/${id}`)).json() as Task;
    if (['completed', 'error', 'failed', 'stopped'].includes(task.status)) return task;
    if (Date.now() > end) throw new Error(`task ${id} stayed ${task.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
