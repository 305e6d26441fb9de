import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TaskQueueRepository } from '../../src/tasks/task-queue.repository.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from './tasks-harness.js';
import type { Task, TaskEvent } from '../../src/tasks/task.types.js';

/** The task API end to end: real runtime, scripted OpenAI-compatible model, in-process worker. */
describe.each(TEST_DBS)('tasks API (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let agentId: string;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    llm.handle((req) => ({ text: `you said: ${req.lastUserText}` }));
    // One task at a time: the stop test shows the aborted run freed the only slot.
    t = await createTasksApp(kind, { env: { AGENTRY_WORKER_CONCURRENCY: '1' } });
    agentId = await t.createAgent(openaiAgentFields(llm.baseUrl));
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  const invoke = (agent: string, body: unknown, suffix = '', headers?: Record<string, string>) => t.req('POST', `/v1/agents/${agent}/invoke${suffix}`, body, headers);

  it('runs a synchronous invocation to completion and records thread, tokens and trace', async () => {
    const r = await invoke(agentId, { input: { text: 'hello', user: { id: 'u-1', email: 'u1@example.com' } } });
    expect(r.statusCode).toBe(200);
    const task = r.json() as Task;
    expect(task).toMatchObject({
      agent_id: agentId,
      organization_id: t.orgA,
      status: 'completed',
      result: 'you said: hello',
      source: 'api',
      execution_attempts: 1,
      user_id: 'u-1',
      input: { text: 'hello', files: [], user: { id: 'u-1', email: 'u1@example.com' } },
      tokens: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      llm_model_provider: 'openai',
      is_manually_stopped: false,
      title: 'hello',
    });
    expect(task.finished_at).toMatch(/\+00:00$/);

    const thread = (await t.req('GET', `/v1/tasks/${task.id}/thread`)).json();
    expect(thread.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'you said: hello'],
    ]);

    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[];
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('task_created');
    expect(types[1]).toBe('task_updated');
    expect(types).toContain('llm_call');
    expect(types[types.length - 1]).toBe('task_finished');
    expect(types.filter((x) => x === 'task_finished')).toHaveLength(1);
    for (const e of events) expect(e).toMatchObject({ task_id: task.id, organization_id: t.orgA });
    expect(events.find((e) => e.type === 'llm_call')!.data).toMatchObject({ provider: 'openai' });
  });

  it('answers an asynchronous invocation with the committed pending task', async () => {
    const r = await invoke(agentId, { input: { text: 'later' } }, '/async');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ status: 'pending', execution_attempts: 0, result: null });
    const done = await t.waitTask(r.json().id, (x) => x.status === 'completed');
    expect(done.result).toBe('you said: later');
  });

  it('continues a conversation on a caller-chosen id, with the history reaching the model', async () => {
    const id = `chat:${Math.random().toString(36).slice(2)} #1`;
    const first = await invoke(agentId, { id, input: { text: 'my name is Ada' } });
    expect(first.json()).toMatchObject({ id, status: 'completed' });
    const before = llm.requests.length;
    const second = await invoke(agentId, { id, input: { text: 'what is my name?' } });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ id, status: 'completed', result: 'you said: what is my name?', execution_attempts: 1 });
    expect(second.json().tokens.total_tokens).toBe(30);
    const sent = JSON.stringify(llm.requests[before].body.messages);
    expect(sent).toContain('my name is Ada');

    const thread = (await t.req('GET', `/v1/tasks/${encodeURIComponent(id)}/thread`)).json();
    expect(thread.map((m: { content: string; run: number }) => [m.run, m.content])).toEqual([
      [1, 'my name is Ada'],
      [1, 'you said: my name is Ada'],
      [2, 'what is my name?'],
      [2, 'you said: what is my name?'],
    ]);
    const events = (await t.req('GET', `/v1/tasks/${encodeURIComponent(id)}/events`)).json() as TaskEvent[];
    expect(events.filter((e) => e.type === 'task_finished')).toHaveLength(2);
  });

  it('reads only the runs an agent replays: a long thread does not make each run read its whole past', async () => {
    const read = vi.spyOn(TaskQueueRepository.prototype, 'history');
    for (const agno of [{ num_history_runs: 2 }, { num_history_runs: 10, session_storage: false }]) {
      const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { agno_settings: agno }));
      const id = `long-${Math.random().toString(36).slice(2)}`;
      for (let i = 1; i <= 5; i++) {
        const before = llm.requests.length;
        expect((await invoke(agent, { id, input: { text: `turn ${i}` } })).json()).toMatchObject({ status: 'completed', result: `you said: turn ${i}` });
        const replayed = llm.requests[before]!.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content);
        const kept = agno.session_storage === false ? [] : [`turn ${i - 2}`, `turn ${i - 1}`].filter((x) => Number(x.slice(5)) >= 1);
        expect(replayed).toEqual([...kept, `turn ${i}`]);
      }
      // Runs 4 and 5 read two runs (one without session storage, for the run numbering): not the whole thread.
      const rows = (await Promise.all(read.mock.results.slice(-2).map((r) => r.value))) as { run: number }[][];
      const runsRead = rows.map((rs) => [...new Set(rs.map((m) => m.run))]);
      expect(runsRead).toEqual(agno.session_storage === false ? [[3], [4]] : [[2, 3], [3, 4]]);
      const thread = (await t.req('GET', `/v1/tasks/${id}/thread`)).json() as { run: number; content: string }[];
      expect(thread.map((m) => m.run)).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    }
    read.mockRestore();
  });

  it('refuses a task id held by another agent (409) but lets another organization use it', async () => {
    const id = `shared-${Math.random().toString(36).slice(2)}`;
    const other = await t.createAgent(openaiAgentFields(llm.baseUrl));
    expect((await invoke(agentId, { id, input: { text: 'a' } }, '/async')).statusCode).toBe(200);
    const clash = await invoke(other, { id, input: { text: 'b' } }, '/async');
    expect(clash.statusCode).toBe(409);
    expect(clash.json()).toEqual({ detail: 'Task id is already used by another agent' });

    const agentB = await t.req('POST', '/v1/agents', { name: 'org b agent', ...openaiAgentFields(llm.baseUrl) }, { 'x-api-key': t.keyB });
    const inB = await invoke(agentB.json().id, { id, input: { text: 'c' } }, '/async', { 'x-api-key': t.keyB });
    expect(inB.statusCode).toBe(200);
    expect(inB.json().organization_id).not.toBe(t.orgA);
    await t.waitTask(id, (x) => x.status === 'completed');
  });

  it('refuses to continue a task that is still running (409)', async () => {
    const id = `busy-${Math.random().toString(36).slice(2)}`;
    llm.reply({ text: 'slow', delayMs: 1500 });
    await invoke(agentId, { id, input: { text: 'slow one' } }, '/async');
    const again = await invoke(agentId, { id, input: { text: 'again' } }, '/async');
    expect(again.statusCode).toBe(409);
    await t.waitTask(id, (x) => x.status === 'completed');
  });

  it('validates the body, the task id and the version; 404 for unknown and foreign agents', async () => {
    const bad = await invoke(agentId, { id: 'bad\nid', input: { text: 1 } }, '/async');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(expect.arrayContaining([['body', 'id'], ['body', 'input', 'text']]));
    expect((await invoke(agentId, { input: { text: 'x' }, id: 'x'.repeat(129) }, '/async')).statusCode).toBe(422);
    expect((await invoke(agentId, {}, '/async')).json().detail[0]).toMatchObject({ loc: ['body', 'input'], type: 'missing' });
    expect((await invoke(agentId, { input: { text: 'x' } }, '/async?version=zero')).statusCode).toBe(422);
    expect((await invoke(agentId, { input: { text: 'x' }, output_format: 'voice' }, '/async')).json().detail[0]).toMatchObject({ loc: ['body', 'output_format'], type: 'value_error' });
    const missingVersion = await invoke(agentId, { input: { text: 'x' } }, '/async?version=99');
    expect(missingVersion.statusCode).toBe(404);
    expect((await invoke('no-such-agent', { input: { text: 'x' } }, '/async')).json()).toEqual({ detail: 'Agent not found' });
    const foreign = await invoke(agentId, { input: { text: 'x' } }, '/async', { 'x-api-key': t.keyB });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ detail: 'Agent not found' });
  });

  it('runs a published version by number and the draft with version=draft', async () => {
    const id = await t.createAgent(openaiAgentFields(llm.baseUrl, { should_stage_before_publish: true }));
    const patched = await t.req('PATCH', `/v1/agents/${id}`, { instructions: { role: [], goal: [], general: 'DRAFT-MARKER' } });
    expect(patched.statusCode).toBe(200);
    const n = llm.requests.length;
    const published = await invoke(id, { input: { text: 'p' } });
    expect(published.json()).toMatchObject({ status: 'completed', agent_version: 2 });
    expect(llm.requests[n].system).not.toContain('DRAFT-MARKER');
    const draft = await invoke(id, { input: { text: 'd' } }, '?version=draft');
    expect(draft.json()).toMatchObject({ status: 'completed', agent_version: 'draft' });
    expect(llm.requests[n + 1].system).toContain('DRAFT-MARKER');
    expect((await invoke(id, { input: { text: 'v' } }, '?version=2')).json()).toMatchObject({ status: 'completed', agent_version: 2 });
  });

  it('refuses inactive agents (409) and enforces max_runs_per_day (429 with Retry-After)', async () => {
    const inactive = await t.createAgent(openaiAgentFields(llm.baseUrl));
    expect((await t.req('PATCH', `/v1/agents/${inactive}`, { status: 'INACTIVE' })).statusCode).toBe(200);
    const r = await invoke(inactive, { input: { text: 'x' } }, '/async');
    expect(r.statusCode).toBe(409);
    expect(r.json()).toEqual({ detail: 'Agent is inactive' });

    const limited = await t.createAgent(openaiAgentFields(llm.baseUrl, { task_level_strategies: { max_runs_per_day: 2 } }));
    const id = `lim-${Math.random().toString(36).slice(2)}`;
    expect((await invoke(limited, { id, input: { text: '1' } })).statusCode).toBe(200);
    // A continued conversation is a run too.
    expect((await invoke(limited, { id, input: { text: '2' } })).statusCode).toBe(200);
    const over = await invoke(limited, { input: { text: '3' } }, '/async');
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(86_400);
  });

  it('holds max_runs_per_day under simultaneous submissions: exactly the limit pass', async () => {
    const limited = await t.createAgent(openaiAgentFields(llm.baseUrl, { task_level_strategies: { max_runs_per_day: 3 } }));
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => invoke(limited, { input: { text: `r${i}` } }, '/async')));
    const codes = answers.map((a) => a.statusCode).sort();
    expect(codes).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
  });

  it('lists with filters and paging, per agent too; 404 for another organization', async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await invoke(agent, { input: { text: `n${i}`, user: { id: i % 2 ? 'odd' : 'even' } } });
      ids.push(r.json().id);
    }
    const page1 = (await t.req('GET', `/v1/tasks?agent_id=${agent}&per_page=2`)).json();
    expect(page1).toMatchObject({ total: 5, page: 1, per_page: 2, total_pages: 3 });
    expect(page1.items.map((x: Task) => x.id)).toEqual([ids[4], ids[3]]);
    const page3 = (await t.req('GET', `/v1/tasks?agent_id=${agent}&per_page=2&page=3`)).json();
    expect(page3.items.map((x: Task) => x.id)).toEqual([ids[0]]);

    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}&user_id=odd`)).json().total).toBe(2);
    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}&status=completed&source=api`)).json().total).toBe(5);
    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}&status=pending`)).json().total).toBe(0);
    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}&source=webhook`)).json().total).toBe(0);
    const third = (await t.req('GET', `/v1/tasks/${ids[2]}`)).json() as Task;
    const from = encodeURIComponent(third.created_at);
    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}&from_date=${from}`)).json().total).toBe(3);
    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}&to_date=${from}`)).json().total).toBe(3);
    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}&to_date=2000-01-01`)).json().total).toBe(0);
    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}&from_date=2000-01-01`)).json().total).toBe(5);
    const bad = await t.req('GET', '/v1/tasks?status=nope&from_date=yesterday&per_page=51');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail.map((d: { loc: unknown[] }) => d.loc[1]).sort()).toEqual(['from_date', 'per_page', 'status']);

    const byAgent = (await t.req('GET', `/v1/agents/${agent}/tasks?per_page=50&user_id=even`)).json();
    expect(byAgent.total).toBe(3);
    expect((await t.req('GET', '/v1/agents/no-such-agent/tasks')).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/agents/${agent}/tasks`, undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/tasks?agent_id=${agent}`, undefined, { 'x-api-key': t.keyB })).json().total).toBe(0);
    for (const path of ['', '/thread', '/events']) {
      const r = await t.req('GET', `/v1/tasks/${ids[0]}${path}`, undefined, { 'x-api-key': t.keyB });
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual({ detail: 'Task not found' });
    }
  });

  it('streams an invocation as Server-Sent Events ending with task_finished', async () => {
    const r = await invoke(agentId, { input: { text: 'stream me' } }, '/stream');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(r.body);
    expect(events[0].type).toBe('task_created');
    expect(events.map((e) => e.type)).toContain('chunk');
    const last = events[events.length - 1];
    expect(last.type).toBe('task_finished');
    expect(last.data).toMatchObject({ status: 'completed', result: 'you said: stream me' });
    const chunks = events.filter((e) => e.type === 'chunk').map((e) => e.data.text).join('');
    expect(chunks).toBe('you said: stream me');

    // Replay of a finished task's trace as SSE, and resuming after an event id.
    const replay = await t.req('GET', `/v1/tasks/${last.task_id}/events`, undefined, { accept: 'text/event-stream' });
    const again = parseSse(replay.body);
    expect(again.map((e) => e.type)).toEqual(events.map((e) => e.type));
    const ids = [...replay.body.matchAll(/^id: (\d+)$/gm)].map((m) => m[1]);
    const resumed = await t.req('GET', `/v1/tasks/${last.task_id}/events`, undefined, { accept: 'text/event-stream', 'last-event-id': ids[ids.length - 2] });
    expect(parseSse(resumed.body).map((e) => e.type)).toEqual(['task_finished']);
  });

  it('follows a running task over SSE until it finishes', async () => {
    llm.reply({ text: 'done slowly', delayMs: 600 });
    const task = (await invoke(agentId, { input: { text: 'follow' } }, '/async')).json() as Task;
    const r = await t.req('GET', `/v1/tasks/${task.id}/events`, undefined, { accept: 'text/event-stream' });
    const events = parseSse(r.body);
    expect(events[0].type).toBe('task_created');
    expect(events[events.length - 1]).toMatchObject({ type: 'task_finished', data: { status: 'completed', result: 'done slowly' } });
  });

  it('stops a running task: stopped at once, its worker aborts, stop is idempotent', async () => {
    llm.reply({ text: 'never', delayMs: 60_000 });
    const task = (await invoke(agentId, { input: { text: 'long' } }, '/async')).json() as Task;
    await t.waitTask(task.id, (x) => x.status === 'executing');
    const n = llm.requests.length;
    await llm.waitForRequests(n >= 1 ? n : 1);
    // While it runs, its trace is readable: events are written in batches, not held until the run ends.
    let types: string[] = [];
    for (const until = Date.now() + 2000; Date.now() < until && !types.includes('task_updated'); await new Promise((r) => setTimeout(r, 20))) {
      types = ((await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[]).map((e) => e.type);
    }
    expect(types.slice(0, 2)).toEqual(['task_created', 'task_updated']);
    const stopped = await t.req('POST', `/v1/tasks/${task.id}/stop`);
    expect(stopped.statusCode).toBe(200);
    expect(stopped.json()).toMatchObject({ status: 'stopped', is_manually_stopped: true });
    expect(stopped.json().finished_at).not.toBeNull();
    const again = await t.req('POST', `/v1/tasks/${task.id}/stop`);
    expect(again.json()).toMatchObject({ status: 'stopped', finished_at: stopped.json().finished_at });
    // The worker's slot is free again: the model call was aborted rather than waited out (60 s).
    const next = await invoke(agentId, { input: { text: 'after stop' } });
    expect(next.json().status).toBe('completed');
    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[];
    expect(events[events.length - 1]).toMatchObject({ type: 'task_finished', data: { status: 'stopped' } });
    expect((await t.req('GET', `/v1/tasks/${task.id}`)).json().status).toBe('stopped');
    // A completed task stays completed.
    expect((await t.req('POST', `/v1/tasks/${next.json().id}/stop`)).json().status).toBe('completed');
    expect((await t.req('POST', '/v1/tasks/nope/stop')).statusCode).toBe(404);
  });

  it('deletes a task with its trace and thread', async () => {
    const task = (await invoke(agentId, { input: { text: 'bye' } })).json() as Task;
    expect((await t.req('DELETE', `/v1/tasks/${task.id}`, undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
    const del = await t.req('DELETE', `/v1/tasks/${task.id}`);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ id: task.id, deleted: true });
    for (const path of ['', '/thread', '/events']) expect((await t.req('GET', `/v1/tasks/${task.id}${path}`)).statusCode).toBe(404);
    expect((await t.req('DELETE', `/v1/tasks/${task.id}`)).statusCode).toBe(404);
  });

  it('ends the task with error and a clear result when the provider fails', async () => {
    llm.reply({ status: 400, error: 'model does not exist' });
    const r = await invoke(agentId, { input: { text: 'boom' } });
    expect(r.json().status).toBe('error');
    expect(r.json().result).toBeTruthy();
  });
});

describe.each(TEST_DBS)('sub-agents through the task queue (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    t = await createTasksApp(kind, { env: { AGENTRY_WORKER_CONCURRENCY: '4' } });
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  it('runs an agent tool as a child task linked by parent_execution and sub_executions', async () => {
    const child = await t.createAgent(openaiAgentFields(llm.baseUrl));
    const parent = await t.createAgent(openaiAgentFields(llm.baseUrl, { tools: [{ type: 'agent', agent_id: child }] }));
    llm.handle((req) => {
      const delegate = req.tools.find((n) => n.startsWith('agent_'));
      const answered = JSON.stringify(req.body.messages).includes('child answer');
      if (delegate && !answered) return { toolCalls: [{ name: delegate, arguments: { input: 'sub question' } }] };
      if (req.lastUserText === 'sub question') return { text: 'child answer' };
      return { text: 'parent final' };
    });
    const r = await t.req('POST', `/v1/agents/${parent}/invoke`, { input: { text: 'ask the expert' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'parent final' });
    expect(r.json().sub_executions).toHaveLength(1);
    const sub = (await t.req('GET', `/v1/tasks/${r.json().sub_executions[0]}`)).json() as Task;
    expect(sub).toMatchObject({ agent_id: child, source: 'sub_agent', parent_execution: r.json().id, status: 'completed', result: 'child answer' });
    expect((await t.req('GET', `/v1/tasks?source=sub_agent&agent_id=${child}`)).json().total).toBe(1);
    const types = ((await t.req('GET', `/v1/tasks/${r.json().id}/events`)).json() as TaskEvent[]).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['sub_agent_trigger', 'tool_call_request', 'tool_call_result']));
  });
});

export function parseSse(body: string): TaskEvent[] {
  return body
    .split('\n\n')
    .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice(6)) as TaskEvent);
}
