import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TaskQueueRepository } from '../../src/tasks/task-queue.repository.js';
import { presentTask } from '../../src/tasks/task.presenter.js';
import { TasksRepository } from '../../src/tasks/tasks.repository.js';
import type { Task, TaskEvent } from '../../src/tasks/task.types.js';
import { TEST_DBS } from '../support/harness.js';
import { aborted, createTasksApp, ScriptedRunner, type TasksApp } from './tasks-harness.js';

const LLM = { model_provider: 'openai', llm_credentials: { name: 'k', value: 'sk-x' }, should_stage_before_publish: false };

/** The queue and the worker against a scripted TaskRunner: approvals, fencing, reclaim, retries, sealing. */
describe.each(TEST_DBS)('task queue and worker (%s)', (kind) => {
  let t: TasksApp;
  const runner = new ScriptedRunner();
  let agentId: string;
  beforeAll(async () => {
    t = await createTasksApp(kind, { runner, env: { AGENTRY_WORKER_CONCURRENCY: '2' } });
    agentId = await t.createAgent({ ...LLM, is_supervised: true });
  });
  afterAll(async () => t?.close());

  const invokeAsync = async (agent: string, text: string, extra: Record<string, unknown> = {}) => {
    const r = await t.req('POST', `/v1/agents/${agent}/invoke/async`, { input: { text }, ...extra });
    expect(r.statusCode).toBe(200);
    return r.json() as Task;
  };

  it('pauses a supervised call until a person approves or rejects it', async () => {
    runner.handler = async (req) => {
      const ok = await req.requestApproval({ tool: 'delete_record', arguments: { id: 7 } });
      return { result: ok ? 'approved' : 'rejected' };
    };
    for (const decision of ['approve', 'reject'] as const) {
      const task = await invokeAsync(agentId, `please ${decision}`);
      const paused = await t.waitTask(task.id, (x) => x.status === 'paused');
      expect(paused.hitl_request).toMatchObject({ tool: 'delete_record', arguments: { id: 7 } });
      const r = await t.req('POST', `/v1/tasks/${task.id}/${decision}`);
      expect(r.statusCode).toBe(200);
      expect(r.json().status).toBe('executing');
      const done = await t.waitTask(task.id, (x) => x.status === 'completed');
      expect(done.result).toBe(decision === 'approve' ? 'approved' : 'rejected');
      expect(done.hitl_request).toBeNull();
      const again = await t.req('POST', `/v1/tasks/${task.id}/${decision}`);
      expect(again.statusCode).toBe(409);
      expect(again.json()).toEqual({ detail: 'Task is not waiting for approval' });
      const types = ((await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[]).map((e) => [e.type, e.data.status]);
      expect(types).toEqual(expect.arrayContaining([['task_updated', 'paused'], ['task_finished', 'completed']]));
    }
    expect((await t.req('POST', '/v1/tasks/none/approve')).statusCode).toBe(404);
  });

  it('answers a synchronous invocation with the paused task; stopping it while paused ends it stopped', async () => {
    runner.handler = async (req) => ({ result: String(await req.requestApproval({ tool: 'send_mail', arguments: {} })) });
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'sync pause' } });
    expect(r.json()).toMatchObject({ status: 'paused', hitl_request: { tool: 'send_mail' } });
    const stopped = await t.req('POST', `/v1/tasks/${r.json().id}/stop`);
    expect(stopped.json()).toMatchObject({ status: 'stopped', hitl_request: null });
    await waitFor(() => runner.requests.length > 0 && runner.requests[runner.requests.length - 1].signal.aborted);
  });

  it('seals user tokens in the row, hands them to the runner, and wipes them when the task ends', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let seen: Record<string, string> | undefined;
    runner.handler = async (req) => {
      seen = req.extras.userTokens;
      await gate;
      return { result: 'ok' };
    };
    const task = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId, source: 'webhook', text: 'tokens', userTokens: { 'mcp-item-1': 'tok-very-secret' } });
    await t.waitTask(task.id, (x) => x.status === 'executing');
    const sealed = await sealedTokens(t, task.id);
    expect(sealed).toBeTruthy();
    expect(sealed).not.toContain('tok-very-secret');
    release();
    await t.waitTask(task.id, (x) => x.status === 'completed');
    expect(seen).toEqual({ 'mcp-item-1': 'tok-very-secret' });
    expect(await sealedTokens(t, task.id)).toBeNull();
    expect(JSON.stringify((await t.req('GET', `/v1/tasks/${task.id}/events`)).json())).not.toContain('tok-very-secret');
  });

  it('lends the slot of a run paused for approval: tasks waiting for a person do not stop the others', async () => {
    runner.handler = async (req) =>
      req.task.input.text.startsWith('needs approval') ? { result: String(await req.requestApproval({ tool: 'send_mail', arguments: {} })) } : { result: 'ran' };
    // As many paused runs as the worker has slots (2), and then some.
    const paused = [];
    for (let i = 0; i < 3; i++) paused.push(await invokeAsync(agentId, `needs approval ${i}`));
    for (const p of paused) await t.waitTask(p.id, (x) => x.status === 'paused');
    const plain = await t.createAgent(LLM);
    const r = await t.req('POST', `/v1/agents/${plain}/invoke`, { input: { text: 'meanwhile' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'ran' });
    // Decided later, each paused run finishes.
    for (const p of paused) expect((await t.req('POST', `/v1/tasks/${p.id}/approve`)).statusCode).toBe(200);
    for (const p of paused) expect((await t.waitTask(p.id, (x) => x.status === 'completed')).result).toBe('true');
  });

  it('runs at most the configured number of tasks at once', async () => {
    const runs = holdRuns(runner);
    const plain = await t.createAgent(LLM);
    const tasks = [];
    for (let i = 0; i < 5; i++) tasks.push(await invokeAsync(plain, `c${i}`));
    await waitFor(() => runs.current === 2);
    const listed = (await t.req('GET', `/v1/tasks?agent_id=${plain}&status=pending`)).json();
    expect(listed.total).toBe(3);
    runs.release();
    for (const task of tasks) await t.waitTask(task.id, (x) => x.status === 'completed');
    expect(runs.peak).toBe(2);
  });

  it('keeps to the configured number of runs when awaited submissions arrive while queued tasks are being claimed', async () => {
    const runs = holdRuns(runner);
    const plain = await t.createAgent(LLM);
    // Queued tasks wake the claim loop; awaited ones ask for a local slot at the same moments.
    const submitted = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text: `mixed ${i}`, awaited: i % 2 === 0 })),
    );
    await waitFor(() => runs.current === 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(runs.current).toBe(2);
    runs.release();
    for (const task of submitted) await t.waitTask(task.id, (x) => x.status === 'completed');
    expect(runs.peak).toBe(2);
  });

  it('starts an awaited submission at once in a free local slot, with the trace a claimed task has', async () => {
    let release!: () => void;
    let gate = new Promise<void>((r) => (release = r));
    runner.handler = async () => {
      await gate;
      return { result: 'ran' };
    };
    const plain = await t.createAgent(LLM);
    const task = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text: 'awaited', awaited: true });
    // Committed already claimed by this process's worker: no claim, no wake-up.
    expect(await rowOf(t, task.id)).toMatchObject({ status: 'executing', lease_owner: t.c.taskWorker.owner, execution_attempts: 1, fence: 1 });
    expect(task.status).toBe('pending');
    release();
    await t.waitTask(task.id, (x) => x.status === 'completed');
    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[];
    expect(events.map((e) => [e.type, e.data.status])).toEqual([
      ['task_created', 'pending'],
      ['task_updated', 'executing'],
      ['task_finished', 'completed'],
    ]);

    // Without a free slot the task is committed pending and claimed the usual way once one frees.
    gate = new Promise<void>((r) => (release = r));
    const busy = [await invokeAsync(plain, 'b1'), await invokeAsync(plain, 'b2')];
    for (const b of busy) await t.waitTask(b.id, (x) => x.status === 'executing');
    const queued = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text: 'no slot', awaited: true });
    expect(await rowOf(t, queued.id)).toMatchObject({ status: 'pending', lease_owner: null, execution_attempts: 0 });
    release();
    for (const x of [...busy, queued]) await t.waitTask(x.id, (y) => y.status === 'completed');
  });

  it('runs a steady stream of awaited submissions in local slots: a run that ends with nothing queued claims nothing', async () => {
    runner.handler = async () => ({ result: 'quick' });
    const plain = await t.createAgent(LLM);
    // Every run ends with all slots running, which wakes the claim loop. A claim holds the free slots while it is in
    // flight; an awaited submission arriving meanwhile found none and went through the queue, which woke another.
    const claims = vi.spyOn(TaskQueueRepository.prototype, 'claimPendingBatch');
    const ids: string[] = [];
    const started = Date.now();
    try {
      await Promise.all(
        [0, 1].map(async (lane) => {
          for (let i = 0; i < 40; i++) {
            const task = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text: `steady ${lane}.${i}`, awaited: true });
            ids.push(task.id);
            await t.c.tasks.submissions.waitForFinal(t.orgA, task.id, { timeoutMs: 10_000, subExecutions: false, submitted: task });
          }
        }),
      );
    } finally {
      claims.mockRestore();
    }
    const seconds = (Date.now() - started) / 1000;
    // Each committed already claimed by a local slot (claimed later, a task starts after it was created).
    const rows = await t.c.db.kysely.selectFrom('tasks').select(['id', 'created_at', 'started_at', 'status']).where('id', 'in', ids).execute();
    expect(rows).toHaveLength(80);
    expect(rows.filter((r) => r.status !== 'completed' || Number(r.started_at) !== Number(r.created_at))).toEqual([]);
    // Claims come from the worker's polls (every 250 ms at most), not from the runs.
    expect(claims.mock.calls.length).toBeLessThanOrEqual(Math.ceil(seconds / 0.25) + 2);
  });

  it('starts an awaited run beside its commit; its first side effect waits for the commit', async () => {
    const plain = await t.createAgent(LLM);
    const steps: string[] = [];
    runner.handler = async (req) => {
      steps.push('run started');
      await req.emit('tool_call_request', { tool_name: 'act' });
      steps.push('tool may act');
      return { result: 'acted' };
    };
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    const insertNew = TasksRepository.prototype.insertNew;
    const spy = vi.spyOn(TasksRepository.prototype, 'insertNew').mockImplementation(async function (this: TasksRepository, items) {
      steps.push('commit held');
      await held;
      return insertNew.call(this, items);
    });
    try {
      const submitted = t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text: 'beside', awaited: true });
      await vi.waitFor(() => expect(steps.slice().sort()).toEqual(['commit held', 'run started']));
      await new Promise((r) => setTimeout(r, 50));
      // The run began (the model call overlaps the commit), but nothing past its first emit.
      expect(steps).toHaveLength(2);
      commit();
      const task = await submitted;
      expect(await t.waitTask(task.id, (x) => x.status === 'completed')).toMatchObject({ result: 'acted', execution_attempts: 1 });
      expect(steps[2]).toBe('tool may act');
      const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[];
      expect(events.map((e) => e.type)).toEqual(['task_created', 'task_updated', 'tool_call_request', 'task_finished']);
    } finally {
      spy.mockRestore();
      commit();
    }
  });

  it('aborts a run started beside a commit that fails: it acts on nothing, and its slot frees', async () => {
    const plain = await t.createAgent(LLM);
    let signal!: AbortSignal;
    let emitted: unknown;
    runner.handler = async (req) => {
      signal = req.signal;
      try {
        await req.emit('tool_call_request', { tool_name: 'act' });
        emitted = 'resolved';
      } catch (err) {
        emitted = err;
        throw err;
      }
      return { result: 'must not happen' };
    };
    const spy = vi.spyOn(TasksRepository.prototype, 'insertNew').mockRejectedValue(new Error('database unavailable'));
    try {
      await expect(t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text: 'lost', awaited: true })).rejects.toThrow('database unavailable');
    } finally {
      spy.mockRestore();
    }
    await vi.waitFor(() => expect(emitted).toBeInstanceOf(Error));
    expect((emitted as Error).message).toBe('The task could not be recorded');
    expect(signal.aborted).toBe(true);
    expect((await t.req('GET', `/v1/tasks?agent_id=${plain}`)).json()).toMatchObject({ total: 0 });
    // Both slots are free again: two awaited submissions are committed claimed, in local slots.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    runner.handler = async () => {
      await gate;
      return { result: 'ok' };
    };
    const both = [];
    for (const text of ['s1', 's2']) both.push(await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text, awaited: true }));
    for (const x of both) expect(await rowOf(t, x.id)).toMatchObject({ status: 'executing', lease_owner: t.c.taskWorker.owner });
    release();
    for (const x of both) await t.waitTask(x.id, (y) => y.status === 'completed');
  });

  it("waits for the outcome of a run in this process's worker without reading the task", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    runner.handler = async () => {
      await gate;
      return { result: 'signalled' };
    };
    const plain = await t.createAgent(LLM);
    const task = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text: 'wait here', awaited: true });
    const find = vi.spyOn(TasksRepository.prototype, 'find');
    try {
      const waiting = t.c.tasks.submissions.waitForFinal(t.orgA, task.id, { timeoutMs: 10_000 });
      await new Promise((r) => setTimeout(r, 50));
      release();
      expect(await waiting).toMatchObject({ id: task.id, status: 'completed', result: 'signalled' });
      expect(find.mock.calls.filter(([, id]) => id === task.id)).toHaveLength(0);
      // A task not running here is read.
      expect((await t.c.tasks.submissions.waitForFinal(t.orgA, task.id, { timeoutMs: 1000 })).status).toBe('completed');
      expect(find.mock.calls.filter(([, id]) => id === task.id)).toHaveLength(1);
    } finally {
      find.mockRestore();
    }
  });

  it('hands a task committed for a slot back to the queue when the worker stopped meanwhile', async () => {
    runner.handler = async () => ({ result: 'ran after all' });
    const plain = await t.createAgent(LLM);
    const slot = t.c.taskWorker.reserve(t.orgA, false);
    expect(slot).toBeDefined();
    await t.c.taskWorker.stop();
    let taskId: string | undefined;
    try {
      // The task as the submission committed it: claimed by this worker.
      const task = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: plain, source: 'api', text: 'late' });
      taskId = task.id;
      const claimed = (await new TaskQueueRepository(t.c.db).claimPending(t.c.taskWorker.owner, Date.now(), 60_000))!;
      expect(claimed.id).toBe(task.id);
      slot!.start(claimed, Promise.resolve(true));
      await waitForAsync(async () => (await rowOf(t, task.id)).status === 'pending');
      expect(await rowOf(t, task.id)).toMatchObject({ lease_owner: null, execution_attempts: 0 });
      // A stopped worker has no slot to give.
      expect(t.c.taskWorker.reserve(t.orgA, false)).toBeUndefined();
    } finally {
      await t.c.taskWorker.start();
    }
    // Handed back, it runs once a worker is there again (and is done before the next test sets its runner).
    expect(await t.waitTask(taskId!, (x) => x.status === 'completed')).toMatchObject({ result: 'ran after all', execution_attempts: 1 });
  });

  it('retries an error outcome under the retry strategy, then completes', async () => {
    const retrying = await t.createAgent({ ...LLM, task_level_strategies: { retry_strategy: { enabled: true, max_retries: 2 } } });
    let calls = 0;
    runner.handler = async () => (++calls === 1 ? { status: 'error', result: 'flaky provider' } : { result: 'second time lucky' });
    const task = await invokeAsync(retrying, 'retry me');
    const done = await t.waitTask(task.id, (x) => x.status === 'completed');
    expect(done).toMatchObject({ result: 'second time lucky', execution_attempts: 2 });
    // Both attempts' tokens count.
    expect(done.tokens.total_tokens).toBe(10);
    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[];
    expect(events.find((e) => e.data.retry_reason)?.data).toMatchObject({ status: 'pending', retry_reason: 'flaky provider' });

    // Without a retry strategy an error is final.
    const plain = await t.createAgent(LLM);
    runner.handler = async () => ({ status: 'error', result: 'no luck' });
    const failed = await t.waitTask((await invokeAsync(plain, 'once')).id, (x) => x.status === 'error');
    expect(failed).toMatchObject({ result: 'no luck', execution_attempts: 1 });
  });

  it('frees the slot of a stopped run that ignores its abort signal', async () => {
    const plain = await t.createAgent(LLM);
    runner.handler = async (req) => (req.task.input.text === 'stuck' ? new Promise(() => {}) : { result: 'free again' });
    const stuck = [await invokeAsync(plain, 'stuck'), await invokeAsync(plain, 'stuck')];
    for (const s of stuck) await t.waitTask(s.id, (x) => x.status === 'executing');
    for (const s of stuck) expect((await t.req('POST', `/v1/tasks/${s.id}/stop`)).json().status).toBe('stopped');
    // Both slots were held by runs that never return; the next task still runs.
    const next = await t.req('POST', `/v1/agents/${plain}/invoke`, { input: { text: 'next' } });
    expect(next.json()).toMatchObject({ status: 'completed', result: 'free again' });
  });

  it("ends a task whose agent was deleted before it ran with error 'Agent not found'", async () => {
    const doomed = await t.createAgent(LLM);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    runner.handler = async () => {
      await gate;
      return { result: 'ok' };
    };
    // Fill both slots so the next task waits in the queue.
    const plain = await t.createAgent(LLM);
    const blockers = [await invokeAsync(plain, 'b1'), await invokeAsync(plain, 'b2')];
    await waitFor(() => runner.requests.filter((r) => r.task.agent_id === plain && !r.signal.aborted).length >= 2);
    const task = await invokeAsync(doomed, 'orphan');
    expect((await t.req('DELETE', `/v1/agents/${doomed}`)).statusCode).toBe(202);
    release();
    const done = await t.waitTask(task.id, (x) => x.status === 'error');
    expect(done.result).toBe('Agent not found');
    for (const b of blockers) await t.waitTask(b.id, (x) => x.status === 'completed');
    // Its tasks stay readable.
    expect((await t.req('GET', `/v1/agents/${doomed}/tasks`)).json().total).toBe(1);
  });
});

/** AGENTRY_MAX_PAUSED_RUNS bounds the paused runs that lend their slot: past it a paused run holds its slot, as before. */
describe.each(TEST_DBS)('paused runs past AGENTRY_MAX_PAUSED_RUNS (%s)', (kind) => {
  let t: TasksApp;
  const runner = new ScriptedRunner();
  beforeAll(async () => {
    t = await createTasksApp(kind, { runner, env: { AGENTRY_WORKER_CONCURRENCY: '1', AGENTRY_MAX_PAUSED_RUNS: '1', AGENTRY_MAX_PAUSED_RUNS_PER_ORG: '0' } });
  });
  afterAll(async () => t?.close());

  it('lends one slot, then the second paused run holds the only slot until its decision', async () => {
    runner.handler = async (req) =>
      req.task.input.text.startsWith('needs approval') ? { result: String(await req.requestApproval({ tool: 'send_mail', arguments: {} })) } : { result: 'ran' };
    const supervised = await t.createAgent({ ...LLM, is_supervised: true });
    const plain = await t.createAgent(LLM);
    const post = async (agent: string, text: string) => (await t.req('POST', `/v1/agents/${agent}/invoke/async`, { input: { text } })).json() as Task;
    const first = await post(supervised, 'needs approval 1');
    await t.waitTask(first.id, (x) => x.status === 'paused');
    const second = await post(supervised, 'needs approval 2');
    await t.waitTask(second.id, (x) => x.status === 'paused');
    const blocked = await post(plain, 'blocked');
    await new Promise((r) => setTimeout(r, 500));
    expect((await t.req('GET', `/v1/tasks/${blocked.id}`)).json().status).toBe('pending');
    expect((await t.req('POST', `/v1/tasks/${second.id}/reject`)).statusCode).toBe(200);
    expect((await t.waitTask(blocked.id, (x) => x.status === 'completed')).result).toBe('ran');
    expect((await t.req('POST', `/v1/tasks/${first.id}/approve`)).statusCode).toBe(200);
    await t.waitTask(first.id, (x) => x.status === 'completed');
  });
});

describe.each(TEST_DBS)('task leases and fencing (%s)', (kind) => {
  let t: TasksApp;
  const runner = new ScriptedRunner();
  let queue: TaskQueueRepository;
  beforeAll(async () => {
    t = await createTasksApp(kind, { runner, worker: false });
    queue = new TaskQueueRepository(t.c.db);
  });
  afterAll(async () => t?.close());

  const lease = (row: { organization_id: string; id: string; fence: number }) => ({ organizationId: row.organization_id, taskId: row.id, fence: Number(row.fence) });
  const outcome = { status: 'completed' as const, result: 'x', tokens: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, llm_model_provider: null, llm_model_name: null };
  const finished = { type: 'task_finished', data: () => '{}' };

  it('refuses every write of a stale attempt once the task was claimed again', async () => {
    const agentId = await t.createAgent(LLM);
    const task = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId, source: 'api', text: 'fence' });
    const now = Date.now();
    const first = (await queue.claimPending('worker-a', now, 1000))!;
    expect(first).toMatchObject({ id: task.id, status: 'executing', execution_attempts: 1, lease_owner: 'worker-a' });
    expect(await queue.claimPending('worker-b', now, 1000)).toBeUndefined();
    // Still leased: nobody may take it over.
    expect(await queue.claimExpired('worker-b', now + 500, 1000)).toBeUndefined();
    const second = (await queue.claimExpired('worker-b', now + 1001, 1000))!;
    expect(second).toMatchObject({ id: task.id, execution_attempts: 2, lease_owner: 'worker-b' });
    expect(Number(second.fence)).toBeGreaterThan(Number(first.fence));

    const stale = lease(first);
    expect(await queue.heartbeat(stale, now, 1000)).toBe(false);
    expect(await queue.appendEvents(stale, [{ type: 'chunk', time: now, data: '{}' }])).toBe(false);
    expect(await queue.pause(stale, '{}', now)).toBe(false);
    expect(await queue.finish(stale, outcome, [], [], finished, now)).toBeUndefined();
    expect(await queue.requeue(stale, now, now, { refundAttempt: true })).toBeUndefined();

    const current = lease(second);
    expect(await queue.heartbeat(current, now, 1000)).toBe(true);
    // In order, in one statement.
    const chunks = ['a', 'b', 'c'].map((text, i) => ({ type: 'chunk', time: now + i, data: JSON.stringify({ text }) }));
    expect(await queue.appendEvents(current, chunks)).toBe(true);
    const trace = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json();
    expect(trace.filter((e: { type: string }) => e.type === 'chunk').map((e: { data: { text: string } }) => e.data.text)).toEqual(['a', 'b', 'c']);
    // A stop moves the fence: the current holder is now stale too.
    expect((await t.req('POST', `/v1/tasks/${task.id}/stop`)).json().status).toBe('stopped');
    expect(await queue.finish(current, outcome, [], [], finished, now)).toBeUndefined();
    expect((await t.req('GET', `/v1/tasks/${task.id}`)).json()).toMatchObject({ status: 'stopped', result: null });
  });

  it('claims several due tasks in one statement, oldest first; concurrent claims never take the same task', async () => {
    const agentId = await t.createAgent(LLM);
    const now = Date.now();
    const tasks = [];
    for (let i = 0; i < 6; i++) tasks.push(await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId, source: 'api', text: `batch ${i}` }));
    // A known queue order (submissions in one millisecond tie), and the last one not due yet.
    for (const [i, task] of tasks.entries()) {
      await t.c.db.kysely.updateTable('tasks').set({ queued_at: i === 5 ? now + 3_600_000 : now - 100 + i }).where('id', '=', task.id).execute();
    }
    const first = await queue.claimPendingBatch('worker-1', now, 60_000, 3);
    expect(first.map((r) => r.id)).toEqual(tasks.slice(0, 3).map((x) => x.id));
    for (const r of first) expect(r).toMatchObject({ status: 'executing', lease_owner: 'worker-1', fence: 1, execution_attempts: 1 });
    const [a, b] = await Promise.all([queue.claimPendingBatch('worker-2', now, 60_000, 3), queue.claimPendingBatch('worker-3', now, 60_000, 3)]);
    const rest = [...a, ...b].map((r) => r.id).sort();
    expect(rest).toEqual([tasks[3]!.id, tasks[4]!.id].sort());
    expect(await queue.claimPendingBatch('worker-4', now, 60_000, 8)).toEqual([]);
    for (const r of [...first, ...a, ...b]) expect(await queue.finish(lease(r), outcome, [], [], finished, now, r)).toMatchObject({ status: 'completed' });
    expect((await t.req('POST', `/v1/tasks/${tasks[5]!.id}/stop`)).json().status).toBe('stopped');
  });

  it('records the outcome, the messages and the whole trace together; the last event shows the task as committed', async () => {
    const agentId = await t.createAgent(LLM);
    const show = { type: 'task_finished', data: (r: Parameters<typeof presentTask>[0]) => JSON.stringify(presentTask(r)) };
    const tokens = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    const message = (taskId: string) => ({ organization_id: t.orgA, task_id: taskId, run: 1, role: 'assistant', content: 'hello', tool_calls: null, tool_call_id: null, created_at: 1 });
    for (const changedUnderFence of [false, true]) {
      const task = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId, source: 'api', text: `finish ${changedUnderFence}` });
      const claimed = (await queue.claimPending('worker-f', Date.now(), 60_000))!;
      // A column the task shows, changed after the claim without moving the fence: the event must still be exact.
      if (changedUnderFence) await t.c.db.kysely.updateTable('tasks').set({ title: 'renamed' }).where('id', '=', task.id).execute();
      const now = Date.now();
      const trace = [
        { type: 'chunk', time: now - 2, data: '{"text":"a"}' },
        { type: 'chunk', time: now - 1, data: '{"text":"b"}' },
      ];
      const row = (await queue.finish(lease(claimed), { ...outcome, tokens }, [message(task.id)], trace, show, now, claimed))!;
      expect(row).toMatchObject({ status: 'completed', result: 'x', prompt_tokens: 3, total_tokens: 5, lease_owner: null, title: changedUnderFence ? 'renamed' : 'finish false' });
      const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[];
      expect(events.map((e) => e.type)).toEqual(['task_created', 'chunk', 'chunk', 'task_finished']);
      const shown = (await t.req('GET', `/v1/tasks/${task.id}`)).json();
      expect(events[3]!.data).toEqual({ ...shown, sub_executions: [] });
      expect((await queue.history(t.orgA, task.id, 2)).map((m) => m.content)).toEqual(['hello']);
    }
  });

  it('records several runs’ outcomes in one commit, each under its own fence', async () => {
    const agentId = await t.createAgent(LLM);
    const show = { type: 'task_finished', data: (r: Parameters<typeof presentTask>[0]) => JSON.stringify(presentTask(r)) };
    const tasks = [];
    for (let i = 0; i < 3; i++) tasks.push(await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId, source: 'api', text: `many ${i}` }));
    const claimed = await queue.claimPendingBatch('worker-m', Date.now(), 60_000, 3);
    expect(claimed.map((r) => r.id).sort()).toEqual(tasks.map((x) => x.id).sort());
    // The second one is stopped meanwhile: its fence moves, so its outcome is stale.
    const stale = claimed[1]!;
    expect((await t.req('POST', `/v1/tasks/${stale.id}/stop`)).json().status).toBe('stopped');
    const now = Date.now();
    const out = await queue.finishMany(
      claimed.map((row, i) => ({
        lease: lease(row),
        fields: { ...outcome, status: i === 2 ? ('failed' as const) : ('completed' as const), result: `result ${i}`, tokens: { prompt_tokens: i, completion_tokens: 1, total_tokens: i + 1 } },
        messages: [0, 1].map((j) => ({ organization_id: row.organization_id, task_id: row.id, run: 1, role: j ? 'assistant' : 'user', content: `m${i}.${j}`, tool_calls: null, tool_call_id: null, created_at: now + j })),
        trace: [{ type: 'chunk', time: now - 1, data: JSON.stringify({ text: `c${i}` }) }],
        event: show,
        now,
        claimed: row,
      })),
    );
    expect(out[1]).toBeUndefined();
    expect(out[0]).toMatchObject({ id: claimed[0]!.id, status: 'completed', result: 'result 0', total_tokens: 1, lease_owner: null });
    expect(out[2]).toMatchObject({ id: claimed[2]!.id, status: 'failed', result: 'result 2', prompt_tokens: 2, total_tokens: 3 });
    for (const i of [0, 2]) {
      const id = claimed[i]!.id;
      const events = (await t.req('GET', `/v1/tasks/${id}/events`)).json() as TaskEvent[];
      expect(events.map((e) => e.type)).toEqual(['task_created', 'chunk', 'task_finished']);
      expect(events[1]!.data).toEqual({ text: `c${i}` });
      expect(events[2]!.data).toEqual({ ...(await t.req('GET', `/v1/tasks/${id}`)).json(), sub_executions: [] });
      expect((await queue.history(t.orgA, id, 2)).map((m) => m.content)).toEqual([`m${i}.0`, `m${i}.1`]);
    }
    // Nothing of the stale outcome was written.
    expect((await t.req('GET', `/v1/tasks/${stale.id}`)).json()).toMatchObject({ status: 'stopped', result: null });
    expect(await queue.history(t.orgA, stale.id, 2)).toEqual([]);
    const staleEvents = (await t.req('GET', `/v1/tasks/${stale.id}/events`)).json() as TaskEvent[];
    expect(staleEvents.filter((e) => e.type === 'chunk')).toEqual([]);
  });

  it('claims a dead worker’s task again after its lease, and ends it error when attempts run out', async () => {
    const agentId = await t.createAgent(LLM);
    const limited = await t.createAgent({ ...LLM, task_level_strategies: { retry_strategy: { enabled: true, max_retries: 0 } } });
    const revived = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId, source: 'api', text: 'revive' });
    const abandoned = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId: limited, source: 'api', text: 'abandon' });
    // A worker claims both and dies (it never heart-beats).
    expect(await queue.claimPending('dead-worker', Date.now(), 1000)).toBeTruthy();
    expect(await queue.claimPending('dead-worker', Date.now(), 1000)).toBeTruthy();
    runner.handler = async (req) => ({ result: `attempt ${req.task.execution_attempts}` });
    await t.c.taskWorker.start();
    try {
      const done = await t.waitTask(revived.id, (x) => x.status === 'completed');
      expect(done).toMatchObject({ result: 'attempt 2', execution_attempts: 2 });
      const dead = await t.waitTask(abandoned.id, (x) => x.status === 'error');
      expect(dead.execution_attempts).toBe(1);
      expect(dead.result).toMatch(/abandoned/);
      const events = (await t.req('GET', `/v1/tasks/${abandoned.id}/events`)).json() as TaskEvent[];
      expect(events.filter((e) => e.type === 'task_finished')).toHaveLength(1);
    } finally {
      await t.c.taskWorker.stop();
    }
  });

  it('hands a running task back to the queue when the worker shuts down, without counting the attempt', async () => {
    const agentId = await t.createAgent(LLM);
    runner.handler = async (req) => {
      await aborted(req.signal);
      throw new Error('aborted');
    };
    await t.c.taskWorker.start();
    const task = await t.c.tasks.submissions.submit({ organizationId: t.orgA, agentId, source: 'api', text: 'shutdown' });
    await t.waitTask(task.id, (x) => x.status === 'executing');
    await t.c.taskWorker.stop();
    expect((await t.req('GET', `/v1/tasks/${task.id}`)).json()).toMatchObject({ status: 'pending', execution_attempts: 0 });
    // waitForFinal answers with the task as it is when the time is up.
    expect((await t.c.tasks.submissions.waitForFinal(t.orgA, task.id, { timeoutMs: 300 })).status).toBe('pending');
    await t.req('POST', `/v1/tasks/${task.id}/stop`);
  });
});

/** Holds every run the runner starts until `release`, counting how many run at once (now, and at most). */
function holdRuns(runner: ScriptedRunner): { readonly current: number; readonly peak: number; release(): void } {
  let current = 0;
  let peak = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  runner.handler = async () => {
    peak = Math.max(peak, ++current);
    await gate;
    current--;
    return { result: 'ok' };
  };
  return {
    get current() {
      return current;
    },
    get peak() {
      return peak;
    },
    release: () => release(),
  };
}

async function sealedTokens(t: TasksApp, id: string): Promise<string | null> {
  const row = await t.c.db.kysely.selectFrom('tasks').select('sealed_user_tokens').where('id', '=', id).executeTakeFirstOrThrow();
  return row.sealed_user_tokens;
}

async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function rowOf(t: TasksApp, id: string) {
  return t.c.db.kysely.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function waitForAsync(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}
