import type { AgentConfig } from '../agents/agent.schemas.js';
import { historyHorizon, summaryReadFrom } from '../runtime/history-context.js';
import { runsOf } from '../runtime/history.js';
import type { ThreadMessage } from '../runtime/task-runner.js';
import type { TaskQueueRepository } from './task-queue.repository.js';
import { presentMessage } from './task.presenter.js';

/** The last run of a thread its stored session summary covers (undefined: none stored); the memory domain keeps them. */
export type SummaryCoverage = (organizationId: string, taskId: string) => Promise<number | undefined>;

export interface ThreadHistoryDeps {
  queue: Pick<TaskQueueRepository, 'history'>;
  summaryCoverage?: SummaryCoverage;
}

/**
 * The earlier messages run `run` of a thread reads: a first run none; a later one only the runs its agent replays
 * (and at least the last one: runners number their messages after it); with session summaries, also the older runs
 * the stored summary does not cover yet (summaryReadFrom), so a thread of thousands of runs costs each run what a
 * short one does.
 */
export async function readThreadHistory(
  d: ThreadHistoryDeps,
  task: { organizationId: string; taskId: string; run: number },
  agent: Pick<AgentConfig, 'agno_settings' | 'task_level_strategies'>,
): Promise<ThreadMessage[]> {
  const { organizationId, taskId, run } = task;
  if (run <= 1) return [];
  const read = async (fromRun: number | undefined) => (await d.queue.history(organizationId, taskId, run, fromRun)).map(presentMessage);
  const horizon = historyHorizon(agent);
  if (typeof horizon === 'number') return read(run - Math.max(1, horizon));
  const plan = summaryReadFrom(run, horizon.summarised, await d.summaryCoverage?.(organizationId, taskId));
  const history = await read(plan.from);
  return plan.enough(runsOf(history).length) ? history : read(undefined);
}
