import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Task } from './task.types.js';

/** The claim a task is committed with (TaskSubmissions.enqueueClaimed); `trx` is the transaction both share. */
export interface ClaimHooks {
  /** Claims the occurrence for the task `taskId`; false when another process has it (nothing is committed). */
  claim(trx: Transaction<Database>, taskId: string): Promise<boolean>;
  /** Records what came of the claim: the task made, or the limit that stopped it. */
  settle(trx: Transaction<Database>, outcome: { taskId?: string; limited?: string }): Promise<void>;
}

export type ClaimedTask = { claimed: false } | { claimed: true; task?: Task; limited?: string };
