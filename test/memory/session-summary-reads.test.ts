import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { SUMMARY_SYSTEM } from '../../src/runtime/history-context.js';
import { TaskQueueRepository } from '../../src/tasks/task-queue.repository.js';
import type { Task } from '../../src/tasks/task.types.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { RecordedRequest, ScriptedLlmServer, ScriptedReply } from '../fakes/scripted-llm.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * Session summaries bound what a run reads of its thread (docs/decisions.md, "Memory"): with a stored summary, a run
 * of a thread of thousands of runs reads the runs it replays, the ones the summary lacks and one covered run, and
 * the model receives what it received when the whole thread was read. The runs are inserted directly.
 */
describe.each(TEST_DBS)('session summaries bound the history read (%s)', (kind) => {
  const RUNS = 2000;
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let summaries: string[];
  beforeAll(async () => {
    [t, llm] = await Promise.all([createTasksApp(kind), startOpenAIServer()]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close()]);
  });
  beforeEach(() => {
    llm.requests.length = 0;
    summaries = [];
    llm.handle((req): ScriptedReply => (req.system === SUMMARY_SYSTEM ? { text: summaries.shift() ?? 'no summary scripted' } : { text: `answer to: ${req.lastUserText}` }));
  });

  const invoke = async (agentId: string, id: string, text: string) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { id, input: { text } });
    expect(r.statusCode, r.body).toBe(200);
    expect((r.json() as Task).status).toBe('completed');
    return r.json() as Task;
  };

  /** A thread of `RUNS` runs ("turn i" / "answer i"), its summary covering runs 1..coveredRun (none when 0). */
  const longThread = async (agentId: string, coveredRun: number, gap?: number) => {
    const id = `long-${kind}-${Math.random().toString(36).slice(2)}`;
    await invoke(agentId, id, 'turn 1');
    const db = t.c.db.kysely;
    await db.deleteFrom('task_messages').where('task_id', '=', id).execute();
    const rows = [];
    for (let run = 1; run <= RUNS; run++) {
      if (run === gap) continue;
      for (const [role, content] of [['user', `turn ${run}`], ['assistant', `answer ${run}`]]) {
        rows.push({ organization_id: t.orgA, task_id: id, run, role, content, tool_calls: null, tool_call_id: null, created_at: 1_700_000_000_000 + run });
      }
    }
    for (let i = 0; i < rows.length; i += 500) await db.insertInto('task_messages').values(rows.slice(i, i + 500)).execute();
    await db.updateTable('tasks').set({ run: RUNS }).where('organization_id', '=', t.orgA).where('id', '=', id).execute();
    if (coveredRun) {
      await db.insertInto('session_summaries').values({ organization_id: t.orgA, task_id: id, covered_run: coveredRun, summary: `Summary up to run ${coveredRun}.`, updated_at: 1 }).execute();
    }
    return id;
  };

  /** Runs the next turn of the thread: the runs its history read returned, and the model's requests. */
  const nextTurn = async (agentId: string, id: string) => {
    llm.requests.length = 0;
    const read = vi.spyOn(TaskQueueRepository.prototype, 'history');
    try {
      await invoke(agentId, id, 'next');
      expect(read).toHaveBeenCalledTimes(1);
      const rows = (await read.mock.results[0]!.value) as { run: number }[];
      return { runsRead: [...new Set(rows.map((m) => Number(m.run)))], requests: [...llm.requests] };
    } finally {
      read.mockRestore();
    }
  };

  const conversation = (requests: RecordedRequest[]) => requests.filter((r) => r.system !== SUMMARY_SYSTEM);
  const replayed = (r: RecordedRequest) => r.body.messages.filter((m: { role: string }) => m.role !== 'system').map((m: { content: string }) => m.content);
  const agentWith = (numHistoryRuns: number) => t.createAgent({ ...scriptedAgentFields(llm.baseUrl), agno_settings: { session_summaries: true, num_history_runs: numHistoryRuns } });

  it('a current summary: the run reads the replayed runs and one covered run, and the prompt is the summary plus the replayed runs', async () => {
    const agent = await agentWith(2);
    const id = await longThread(agent, RUNS - 2);
    const { runsRead, requests } = await nextTurn(agent, id);
    expect(runsRead).toEqual([RUNS - 2, RUNS - 1, RUNS]);
    expect(requests.filter((r) => r.system === SUMMARY_SYSTEM)).toHaveLength(0);
    const [model] = conversation(requests);
    expect(conversation(requests)).toHaveLength(1);
    expect(model!.system).toContain(`## Summary of the earlier conversation\nSummary up to run ${RUNS - 2}.`);
    expect(replayed(model!)).toEqual([`turn ${RUNS - 1}`, `answer ${RUNS - 1}`, `turn ${RUNS}`, `answer ${RUNS}`, 'next']);
  });

  it('a summary that fell behind: the run reads from its last covered run, and the summary call adds exactly the runs it lacks', async () => {
    const agent = await agentWith(2);
    const covered = RUNS - 10;
    const id = await longThread(agent, covered);
    summaries.push('Extended summary.');
    const { runsRead, requests } = await nextTurn(agent, id);
    expect(runsRead).toEqual(Array.from({ length: 11 }, (_, i) => covered + i));
    const summaryCalls = requests.filter((r) => r.system === SUMMARY_SYSTEM);
    expect(summaryCalls).toHaveLength(1);
    const lacking = Array.from({ length: 8 }, (_, i) => covered + 1 + i);
    expect(summaryCalls[0]!.lastUserText).toBe(
      `Summary so far:\nSummary up to run ${covered}.\n\nConversation to add to the summary:\n${lacking.map((r) => `User: turn ${r}\nAgent: answer ${r}`).join('\n')}\n\nWrite the updated summary.`,
    );
    const [model] = conversation(requests);
    expect(model!.system).toContain('## Summary of the earlier conversation\nExtended summary.');
    expect(replayed(model!)).toEqual([`turn ${RUNS - 1}`, `answer ${RUNS - 1}`, `turn ${RUNS}`, `answer ${RUNS}`, 'next']);
    const stored = await t.c.db.kysely.selectFrom('session_summaries').select(['covered_run', 'summary']).where('task_id', '=', id).executeTakeFirstOrThrow();
    expect({ covered: Number(stored.covered_run), summary: stored.summary }).toEqual({ covered: RUNS - 2, summary: 'Extended summary.' });
  });

  it('num_history_runs 0 replays nothing: the run reads only the last run, which the summary covers', async () => {
    const agent = await agentWith(0);
    const id = await longThread(agent, RUNS);
    const { runsRead, requests } = await nextTurn(agent, id);
    expect(runsRead).toEqual([RUNS]);
    const [model] = conversation(requests);
    expect(model!.system).toContain(`## Summary of the earlier conversation\nSummary up to run ${RUNS}.`);
    expect(replayed(model!)).toEqual(['next']);
  });

  it('a run that left no messages makes the read fall back to the whole thread, with the same prompt as before', async () => {
    const read = vi.spyOn(TaskQueueRepository.prototype, 'history');
    try {
      const agent = await agentWith(2);
      // Run RUNS-1 left no messages: the two replayed runs are RUNS-2 and RUNS, and the read from RUNS-2 finds two
      // runs where it counted on three.
      const id = await longThread(agent, RUNS - 2, RUNS - 1);
      read.mockClear();
      llm.requests.length = 0;
      await invoke(agent, id, 'next');
      const reads = (await Promise.all(read.mock.results.map((r) => r.value))) as { run: number }[][];
      expect(reads.map((rows) => new Set(rows.map((m) => Number(m.run))).size)).toEqual([2, RUNS - 1]);
      const [model] = conversation(llm.requests);
      expect(replayed(model!)).toEqual([`turn ${RUNS - 2}`, `answer ${RUNS - 2}`, `turn ${RUNS}`, `answer ${RUNS}`, 'next']);
      expect(model!.system).toContain(`## Summary of the earlier conversation\nSummary up to run ${RUNS - 2}.`);
      expect(llm.requests.filter((r) => r.system === SUMMARY_SYSTEM)).toHaveLength(0);
    } finally {
      read.mockRestore();
    }
  });
});
