import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { RunAbortedError } from '../../src/runtime/task-runner.js';
import type { Task, TaskEvent } from '../../src/tasks/task.types.js';
import { TEST_DBS } from '../support/harness.js';
import { aborted, createTasksApp, ScriptedRunner, type TasksApp } from './tasks-harness.js';

const LLM = { model_provider: 'openai', llm_credentials: { name: 'k', value: 'sk-x' }, should_stage_before_publish: false };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * AGENTRY_RUN_TIMEOUT_MS (src/tasks/run-deadline.ts, checked by the RunSupervisor's control loop): a run past it ends
 * in error and frees its slot; waits for a person or a child do not count.
 */
describe.each(TEST_DBS)('run deadline (%s)', (kind) => {
  let t: TasksApp;
  const runner = new ScriptedRunner();
  let agentId: string;
  beforeAll(async () => {
    // One slot: a run that kept it would keep every later task waiting.
    t = await createTasksApp(kind, { runner, env: { AGENTRY_WORKER_CONCURRENCY: '1', AGENTRY_RUN_TIMEOUT_MS: '800' } });
    agentId = await t.createAgent({ ...LLM, is_supervised: true });
  });
  afterAll(async () => t?.close());

  const invokeAsync = async (text: string) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { input: { text } });
    expect(r.statusCode).toBe(200);
    return r.json() as Task;
  };

  it('stops a run that works past the deadline: the task ends in error with the reason in its result and trace, and its slot frees', async () => {
    runner.handler = async (req) => {
      if (req.task.input.text !== 'forever') return { result: 'next one ran' };
      // Works until aborted, then gives up as the runtime does, with what it consumed.
      await aborted(req.signal);
      throw new RunAbortedError({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 }, [], req.signal.reason);
    };
    const task = await invokeAsync('forever');
    const done = await t.waitTask(task.id, (x) => x.status === 'error', 10_000);
    expect(done.result).toBe('The run exceeded its time limit of 800 ms (AGENTRY_RUN_TIMEOUT_MS) and was stopped');
    expect(done.tokens.total_tokens).toBe(10);
    const events = (await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as TaskEvent[];
    expect(events.at(-1)).toMatchObject({ type: 'task_finished', data: { status: 'error', result: done.result } });
    const next = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'after' } });
    expect(next.json()).toMatchObject({ status: 'completed', result: 'next one ran' });
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^agentry_runs_timed_out_total 1$/m);
  });

  it('lets a run that finishes anyway after its deadline keep its answer', async () => {
    runner.handler = async (req) => {
      await aborted(req.signal);
      return { result: 'done just in time' };
    };
    const done = await t.waitTask((await invokeAsync('late')).id, (x) => x.status !== 'pending' && x.status !== 'executing', 10_000);
    expect(done).toMatchObject({ status: 'completed', result: 'done just in time' });
  });

  it('frees the slot of a run that ignores its abort once the grace period has passed', async () => {
    runner.handler = async (req) => (req.task.input.text === 'deaf' ? new Promise(() => {}) : { result: 'still served' });
    const task = await invokeAsync('deaf');
    const done = await t.waitTask(task.id, (x) => x.status === 'error', 15_000);
    expect(done.result).toContain('AGENTRY_RUN_TIMEOUT_MS');
    const next = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'after' } });
    expect(next.json()).toMatchObject({ status: 'completed', result: 'still served' });
  }, 30_000);

  it('does not count a wait for a human approval, and counts again after the decision', async () => {
    let decidedAt = 0;
    let abortedAfterMs = -1;
    runner.handler = async (req) => {
      const ok = await req.requestApproval({ tool: 'delete_record', arguments: { id: 1 } });
      decidedAt = Date.now();
      // Works on after the decision until the deadline, what is left of its 800 ms, stops it.
      await aborted(req.signal);
      abortedAfterMs = Date.now() - decidedAt;
      throw new RunAbortedError({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, [], ok);
    };
    const task = await invokeAsync('approve me');
    await t.waitTask(task.id, (x) => x.status === 'paused');
    // Well past the deadline while the person thinks.
    await sleep(1_500);
    expect((await t.req('POST', `/v1/tasks/${task.id}/approve`)).statusCode).toBe(200);
    const done = await t.waitTask(task.id, (x) => x.status === 'error', 10_000);
    expect(done.result).toContain('AGENTRY_RUN_TIMEOUT_MS');
    // Stopped by the rest of its deadline after the approval, not during the wait.
    expect(abortedAfterMs).toBeGreaterThan(300);
    expect(abortedAfterMs).toBeLessThan(1_500);
  });

  it('does not count a wait for a child task (parkWhile)', async () => {
    let parkedFor = 0;
    let abortedAfterMs = -1;
    runner.handler = async (req) => {
      const started = Date.now();
      await req.parkWhile!(sleep(1_500));
      parkedFor = Date.now() - started;
      const back = Date.now();
      await aborted(req.signal);
      abortedAfterMs = Date.now() - back;
      throw new RunAbortedError({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, [], null);
    };
    const done = await t.waitTask((await invokeAsync('parent')).id, (x) => x.status === 'error', 10_000);
    expect(done.result).toContain('AGENTRY_RUN_TIMEOUT_MS');
    expect(parkedFor).toBeGreaterThanOrEqual(1_400);
    expect(abortedAfterMs).toBeGreaterThan(300);
  });
});

describe('AGENTRY_RUN_TIMEOUT_MS', () => {
  const base = { AGENTRY_DATA_DIR: '/nonexistent' };
  it('is one hour unless set; 0 turns it off', () => {
    expect(loadConfig(base).worker.runTimeoutMs).toBe(3_600_000);
    expect(loadConfig({ ...base, AGENTRY_RUN_TIMEOUT_MS: '0' }).worker.runTimeoutMs).toBe(0);
    expect(() => loadConfig({ ...base, AGENTRY_RUN_TIMEOUT_MS: '-1' })).toThrow(/AGENTRY_RUN_TIMEOUT_MS/);
  });
});
