import type { TaskRow } from './tasks.repository.js';

/**
 * This process's worker as submissions see it. A submission whose caller waits for the run (`awaited`) is committed
 * already claimed by a free local slot and handed straight to it: no claim statement, no wake-up hop. Without a free
 * slot (or without a worker role here) the task is committed pending and claimed the usual way.
 *
 * The claimed row is as durable as any claim: should this process die before or during the run, the lease runs out
 * and another worker claims the task again.
 */
export interface LocalSlots {
  /** Holds a free slot for a task about to be committed; undefined when none is free or the worker is not running. */
  reserve(): SlotReservation | undefined;
  /**
   * True while the task runs here and its outcome is not yet recorded: its next status change will be signalled in
   * this process, with the row (so a waiter need not read the task first).
   */
  runningHere(organizationId: string, taskId: string): boolean;
}

export type ClaimColumns = Pick<TaskRow, 'status' | 'lease_owner' | 'lease_expires_at' | 'heartbeat_at' | 'fence' | 'execution_attempts' | 'started_at'>;

export interface SlotReservation {
  /** The columns a claim of a new task at `now` sets (TaskQueueRepository.claim), to commit the task with. */
  claim(now: number): ClaimColumns;
  /** The task is committed as claimed: run it (or, if the worker stopped meanwhile, hand it back to the queue). */
  run(row: TaskRow): void;
  /** The commit failed: free the slot. */
  release(): void;
}
