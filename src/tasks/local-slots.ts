import type { TaskRow } from './tasks.repository.js';

/**
 * This process's worker as submissions see it. A submission whose caller waits for the run (`awaited`) is committed
 * already claimed by a free local slot and handed straight to it: no claim statement, no wake-up hop. Without a free
 * slot (or without a worker role here) the task is committed pending and claimed the usual way.
 *
 * The run starts while the task's commit is still on its way (on PostgreSQL a round trip, about a millisecond here):
 * the model's first call overlaps it. Nothing else of the run goes ahead of the commit: its trace writes, its
 * outcome and, above all, its tool calls (each is announced by an event the runner awaits, and the run's `emit`
 * resolves only once the task is committed). Should the commit fail, the run is aborted before any of that, and
 * the model call it had begun is all it did.
 *
 * The claimed row is as durable as any claim: should this process die before or during the run, the lease runs out
 * and another worker claims the task again.
 */
export interface LocalSlots {
  /**
   * Holds a free slot for a task of `organizationId` about to be committed (`child`: a run's child task); undefined
   * when none is free, the worker is not running, or the organization is held back for its paused runs.
   */
  reserve(organizationId: string, child: boolean): SlotReservation | undefined;
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
  /**
   * Runs the task as committed with `claim`'s columns, starting now; `committed` settles with the commit: true once
   * it returned, false if it failed (the run is then aborted and the slot freed). A worker that stopped meanwhile
   * runs nothing and hands the task back to the queue once it is committed.
   */
  start(row: TaskRow, committed: Promise<boolean>): void;
}

/**
 * When an awaited task's run starts beside its commit (local-slots.ts). The run's setup and first model call overlap
 * the commit either way; what differs is which goes first on this thread.
 * - `after-send` (PostgreSQL): once the commit is on its way, so the database's round trip and WAL flush, the longest
 *   part of the sync round trip, begin before the run's CPU work rather than after it (p50 5.97 -> 5.43 ms, A/B);
 * - `now` (libsql): the commit is CPU on this thread, so the model call is better sent first and answered while it
 *   runs (run first: 1.96 ms p50; commit first: 2.46 ms).
 */
export type RunStart = 'now' | 'after-send';
