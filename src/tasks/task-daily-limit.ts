import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { TaskSubmission } from './task.types.js';
import type { TasksRepository } from './tasks.repository.js';

const DAY_MS = 86_400_000;

/**
 * `max_runs_per_day` (task_level_strategies): runs of one agent per UTC day, counted inside the submission's
 * transaction with the agent's count locked, so two submissions cannot both take the last run.
 */
export async function overDailyLimit(repo: TasksRepository, trx: Transaction<Database>, s: TaskSubmission, max: number, now: number): Promise<{ message: string; retryAfter: number } | undefined> {
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  await repo.lockAgentRuns(trx, s.organizationId, s.agentId);
  const used = await repo.countRunsSince(s.organizationId, s.agentId, dayStart, trx);
  if (used < max) return undefined;
  return { message: `The agent's limit of ${max} runs per day is reached`, retryAfter: Math.max(1, Math.ceil((dayStart + DAY_MS - now) / 1000)) };
}

/** The same as a 429 with Retry-After at the next UTC midnight. */
export async function checkDailyLimit(repo: TasksRepository, trx: Transaction<Database>, s: TaskSubmission, max: number, now: number): Promise<void> {
  const over = await overDailyLimit(repo, trx, s, max, now);
  if (over) throw new AppError('rate_limited', over.message, { retryAfter: over.retryAfter });
}
