import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import type { ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { crashSuite, killHard, WorkerProcesses } from '../support/processes.js';
import { openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/** A deep-planning run whose worker process is SIGKILLed mid-run resumes from the plan stored in its trace. */
describe.each(TEST_DBS)('deep planning survives a worker crash (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  const workers = new WorkerProcesses(() => t);

  crashSuite(kind, workers, (app, model) => ((t = app), (llm = model)));

  it('the next attempt is given the plan with its completed steps and goes on from there', { timeout: 120_000 }, async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { deep_planning: true }));
    let firstAttemptCalls = 0;
    llm.handle((req) => {
      if (req.system.includes('This run was interrupted')) {
        const sawTool = req.body.messages.some((m: { role: string }) => m.role === 'tool');
        return sawTool ? { text: 'Report confirmed.' } : { toolCalls: [{ name: 'update_plan', arguments: { step_id: 2, status: 'completed', note: 'confirmed' } }] };
      }
      firstAttemptCalls++;
      if (firstAttemptCalls === 1) return { toolCalls: [{ name: 'create_plan', arguments: { steps: ['Send the report', 'Confirm receipt'] } }] };
      if (firstAttemptCalls === 2) return { toolCalls: [{ name: 'update_plan', arguments: { step_id: 1, status: 'completed', note: 'sent to ops' } }] };
      return { text: 'never', delayMs: 120_000 };
    });
    const task = (await t.req('POST', `/v1/agents/${agent}/invoke/async`, { input: { text: 'Send and confirm the report' } })).json() as Task;
    workers.spawn();
    workers.spawn();
    await llm.waitForRequests(3, 60_000);
    // The plan with step 1 checked off is in the trace before the worker dies.
    const planEvents = async () => ((await t.req('GET', `/v1/tasks/${task.id}/events`)).json() as { type: string; data: any }[]).filter((e) => e.type === 'plan');
    for (let i = 0; (await planEvents()).length < 2; i++) {
      if (i > 100) throw new Error('the plan never reached the trace');
      await new Promise((r) => setTimeout(r, 50));
    }
    // Throws unless one of the spawned workers holds the task.
    await killHard(await workers.holderOf(task.id));

    const done = await t.waitTask(task.id, (x) => x.status === 'completed', 60_000);
    expect(done).toMatchObject({ result: 'Report confirmed.', execution_attempts: 2 });
    const resumed = llm.requests.find((r) => r.system.includes('This run was interrupted'))!;
    expect(resumed.system).toContain('resumed (attempt 2)');
    expect(resumed.system).toContain('1. [x] Send the report (completed; note: sent to ops)');
    expect(resumed.system).toContain('2. [ ] Confirm receipt (pending)');

    const plans = await planEvents();
    expect(plans.map((e) => [e.data.action, e.data.attempt])).toEqual([
      ['created', 1],
      ['updated', 1],
      ['restored', 2],
      ['updated', 2],
    ]);
    expect(plans.at(-1)!.data.plan.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed']);
  });
});
