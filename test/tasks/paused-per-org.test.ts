import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { RecordedRequest, ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { injectPoster, postAgent, scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from './tasks-harness.js';

/**
 * AGENTRY_MAX_PAUSED_RUNS_PER_ORG (SlotLedger.heldBack): one organization's supervised tasks that nobody decides
 * must not take every slot of a worker. Without the bound, A's paused runs fill the loans (AGENTRY_MAX_PAUSED_RUNS)
 * and then the slots, and B's task waits as long as A's decisions do. The real runtime, against a scripted model
 * that asks to delegate (a supervised manager's mutating call) until it is given the sub-agent's answer.
 */
describe.each(TEST_DBS)('paused runs per organization (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    t = await createTasksApp(kind, {
      env: { AGENTRY_WORKER_CONCURRENCY: '2', AGENTRY_MAX_PAUSED_RUNS: '3', AGENTRY_MAX_PAUSED_RUNS_PER_ORG: '2', AGENTRY_SYNC_TIMEOUT_MS: '3000' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  const toolMessage = (req: RecordedRequest) => req.body.messages.find((m: { role: string }) => m.role === 'tool');
  const asB = () => ({ 'x-api-key': t.keyB });
  const taskOf = async (id: string, headers?: Record<string, string>) => (await t.req('GET', `/v1/tasks/${id}`, undefined, headers)).json() as Task;
  /** Polls B's task (waitTask reads as A) until it is final, 20 s at most. */
  const waitFinalAsB = async (id: string) => {
    const end = Date.now() + 20_000;
    for (;;) {
      const task = await taskOf(id, asB());
      if (['completed', 'failed', 'error', 'stopped'].includes(task.status)) return task;
      if (Date.now() > end) throw new Error(`B's task stayed ${task.status}: A's paused runs took every slot`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it("holds back A's new tasks at its bound of paused runs; B's task runs; a decision lets A's next task start", async () => {
    const base = scriptedAgentFields(llm.baseUrl);
    const childId = await t.createAgent(base);
    const supervised = await t.createAgent({ ...base, type: 'manager', is_supervised: true, tools: [{ type: 'agent', agent_id: childId }] });
    const plainA = await t.createAgent(base);
    const plainB = (await postAgent(injectPoster(t.req, t.keyB), base)).id as string;
    // The manager asks to delegate (paused for approval) until the child's answer comes back; the others answer.
    llm.handle((req) => {
      if (req.tools.length === 0) return { text: `answer to ${req.lastUserText}` };
      const tool = toolMessage(req);
      return tool ? { text: `delegated: ${tool.content}` } : { toolCalls: [{ id: 'call_1', name: req.tools[0]!, arguments: { input: 'refund' } }] };
    });

    // Five supervised tasks of A: two slots, three loans. Unbounded, all five would be claimed and pause, the last two
    // holding both slots. The first two are sent one by one, each once the one before paused: a task claimed before
    // A's count reached its bound runs, and pauses, all the same.
    const a: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await t.req('POST', `/v1/agents/${supervised}/invoke/async`, { input: { text: `supervised ${i}` } });
      expect(r.statusCode, r.body).toBe(200);
      a.push((r.json() as Task).id);
      if (i < 2) await t.waitTask(a[i]!, (x) => x.status === 'paused');
    }

    const b = await t.req('POST', `/v1/agents/${plainB}/invoke/async`, { input: { text: 'from B' } }, asB());
    expect(b.statusCode, b.body).toBe(200);
    expect(await waitFinalAsB((b.json() as Task).id)).toMatchObject({ status: 'completed', result: 'answer to from B' });
    // A's other three were queued before B's task, ahead of it in the claim's order: skipped, not lost.
    for (const id of a.slice(2)) expect((await taskOf(id)).status).toBe('pending');
    const heldBack = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body.match(/^agentry_worker_organizations_held_back (\d+)$/m)?.[1];
    expect(await heldBack()).toBe('1');

    // A synchronous call of A is not started in a free slot either: committed pending, answered as it is when
    // AGENTRY_SYNC_TIMEOUT_MS runs out.
    const sync = await t.req('POST', `/v1/agents/${plainA}/invoke`, { input: { text: 'sync of A' } });
    expect(sync.statusCode, sync.body).toBe(200);
    expect(sync.json()).toMatchObject({ status: 'pending' });

    // A decision brings A under its bound: the approved run delegates (its child task starts whatever A's count)
    // and completes, and A's next task in order is claimed (and pauses).
    expect((await t.req('POST', `/v1/tasks/${a[0]}/approve`)).statusCode).toBe(200);
    expect(await t.waitTask(a[0]!)).toMatchObject({ status: 'completed', result: 'delegated: answer to refund' });
    await t.waitTask(a[2]!, (x) => x.status === 'paused');

    // Stops free the count too: A's synchronous task, queued behind, runs.
    for (const id of a) await t.req('POST', `/v1/tasks/${id}/stop`);
    expect(await t.waitTask(sync.json().id)).toMatchObject({ status: 'completed', result: 'answer to sync of A' });
    expect(await heldBack()).toBe('0');
  });
});
