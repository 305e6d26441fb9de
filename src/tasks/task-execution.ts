import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Lease, TaskQueueRepository, TraceEvent } from './task-queue.repository.js';
import type { TaskSignals } from './task-signals.js';
import type { TaskEvent } from './task.types.js';
import type { WorkClock } from './run-deadline.js';

/**
 * One run as the worker holds it (task.worker.ts, in its SlotLedger), and the writing of its trace. The worker
 * claims (task-claimer.ts) and controls (run-supervisor.ts) runs; TraceWriter writes what they emit;
 * OutcomeRecorder (task-outcome-recorder.ts) records how they end.
 */

/**
 * `unrecorded`: the run started beside its submission's commit (LocalSlots), and the commit failed. `timeout`: the
 * run worked past its deadline (run-deadline.ts); `approval-expired`: nobody decided on its approval within
 * AGENTRY_APPROVAL_TIMEOUT_MS. Unlike the others, the task of those two still ends here, in `error`.
 */
export type AbortReason = 'lost' | 'shutdown' | 'unrecorded' | 'timeout' | 'approval-expired';
/** What the run's abort signal says, by reason. */
const ABORT_MESSAGES: Record<AbortReason, string> = {
  lost: 'The task was stopped or taken over',
  shutdown: 'The worker is shutting down',
  unrecorded: 'The task could not be recorded',
  timeout: 'The run exceeded its time limit (AGENTRY_RUN_TIMEOUT_MS)',
  'approval-expired': 'Nobody decided on the approval in time (AGENTRY_APPROVAL_TIMEOUT_MS)',
};

export interface Execution {
  lease: Lease;
  abort: AbortController;
  reason?: AbortReason;
  lastBeat: number;
  /** The run's working time and deadline, checked by the RunSupervisor. */
  work: WorkClock;
  approval?: (approved: boolean) => void;
  /** When the pending approval was asked (clock ms), for AGENTRY_APPROVAL_TIMEOUT_MS. */
  approvalAskedAt?: number;
  /** The tool (or workflow step) the pending approval is for, for the message of an expired one. */
  approvalFor?: string;
  /** The run returned and its outcome is being written: the lease is about to be released on purpose. */
  settling: boolean;
  /** Trace events emitted and not yet handed to a write (see emit). */
  buffered: TraceEvent[];
  /** Whether a buffered event changed the status (its signal must say so). */
  bufferedStatusChange: boolean;
  flushTimer?: NodeJS.Timeout;
  /**
   * Settles once the task is committed: at once for a claimed task, with the submission's commit for one started
   * beside it (LocalSlots); rejects with the abort reason if that commit failed. The run's `emit` returns it, and
   * the trace writes and the outcome are chained after it.
   */
  recorded: Promise<void>;
  /** The submission's commit has not returned yet: the task is not in the database, so no control check applies. */
  unrecorded: boolean;
  /** The trace writes so far, chained in order (after `recorded`). */
  trace: Promise<void>;
  done: Promise<void>;
}

/** Aborts the run (once): its signal says why, and a pending approval counts as a rejection. */
export function abortExecution(e: Execution, reason: AbortReason, log: Logger): void {
  if (e.abort.signal.aborted) return;
  if (reason === 'lost') log.warn({ task_id: e.lease.taskId, fence: e.lease.fence }, 'task was stopped or taken over; aborting its run');
  if (reason === 'timeout') log.warn({ task_id: e.lease.taskId }, 'run exceeded its time limit (AGENTRY_RUN_TIMEOUT_MS); aborting it');
  e.reason = reason;
  e.abort.abort(new Error(ABORT_MESSAGES[reason]));
  e.approval?.(false);
}

/**
 * How long a run's trace events wait to be written together. A quick run's events all go into the transaction that
 * records its outcome; a long run's reach the trace (and the console's live view) in batches this far apart.
 */
const TRACE_FLUSH_MS = 25;

export interface TraceWriterDeps {
  queue: TaskQueueRepository;
  signals: TaskSignals;
  clock: Clock;
  log: Logger;
}

/** A run's trace: buffered, written in batches in order, fenced by the run's lease. */
export class TraceWriter {
  constructor(private readonly d: TraceWriterDeps) {}

  /**
   * Buffers a trace event; the run does not wait for it. Buffered events are written together, TRACE_FLUSH_MS
   * after the first of them, in one statement (on PostgreSQL each write is a round trip, on SQLite a commit, and a
   * run emits about ten), or with the outcome when the run ends first. Writes are chained per run, so events keep
   * their order; the event's time and data are taken now. A write the fence refuses means the task was stopped or
   * taken over: the run aborts, as it would have on its next control check. A failing write (the database) aborts
   * it the same way; its lease then runs out and the task is claimed again, as after a crash. A crash of this
   * process loses at most the last TRACE_FLUSH_MS of the trace of a run that is claimed again.
   */
  emit(e: Execution, type: TaskEvent['type'], data: object, statusChanged = false): void {
    e.buffered.push({ type, time: this.d.clock.now(), data: JSON.stringify(data) });
    e.bufferedStatusChange ||= statusChanged;
    e.flushTimer ??= setTimeout(() => void this.flush(e), TRACE_FLUSH_MS);
  }

  /** Writes the buffered events now; resolves when every event emitted so far is written (or refused). */
  flush(e: Execution): Promise<void> {
    clearTimeout(e.flushTimer);
    e.flushTimer = undefined;
    const batch = e.buffered.splice(0);
    const statusChanged = e.bufferedStatusChange;
    e.bufferedStatusChange = false;
    if (!batch.length) return e.trace;
    const write = async () => {
      // No task was committed to write them to.
      if (e.reason === 'unrecorded') return;
      try {
        if (!(await this.d.queue.appendEvents(e.lease, batch))) abortExecution(e, 'lost', this.d.log);
        else this.d.signals.publish({ kind: 'task', organizationId: e.lease.organizationId, taskId: e.lease.taskId, statusChanged });
      } catch (err) {
        this.d.log.error({ err, task_id: e.lease.taskId }, 'could not record a trace event; abandoning the run');
        abortExecution(e, 'lost', this.d.log);
      }
    };
    e.trace = e.trace.then(write);
    return e.trace;
  }
}
