import { performance } from 'node:perf_hooks';
import { AppError } from '../errors.js';
import type { LocalSlots } from './local-slots.js';
import { presentEvent, presentTask } from './task.presenter.js';
import { Waker } from '../lib/waker.js';
import { TaskSignals } from './task-signals.js';
import { FINAL_STATUSES, type Task, type TaskEvent, type TaskStatus, type WaitOptions } from './task.types.js';
import type { TaskRow, TasksRepository } from './tasks.repository.js';

/** Trace events read per query while following a task. */
const EVENT_BATCH = 500;

/** A task as the API shows it, with its sub-executions (one read). */
export async function presentWithChildren(repo: TasksRepository, row: TaskRow): Promise<Task> {
  const children = await repo.children(row.organization_id, [row.id]);
  return presentTask(row, children.get(row.id) ?? []);
}

/**
 * Waiting on tasks: for a final status (synchronous callers, sub-agents) and along a trace (SSE streams). Signals
 * (task-signals.ts) wake the waits; a poll is the fallback, so a lost signal delays but never loses an answer.
 */
export class TaskWatch {
  constructor(
    private readonly repo: TasksRepository,
    private readonly signals: TaskSignals,
    private readonly localSlots?: LocalSlots,
  ) {}

  async waitForFinal(organizationId: string, taskId: string, { timeoutMs, signal, subExecutions = true, submitted }: WaitOptions): Promise<Task> {
    const deadline = performance.now() + timeoutMs;
    const justSubmitted = submitted?.status === 'pending' || submitted?.status === 'executing';
    return this.watch(organizationId, taskId, async (waker, committed) => {
      const onAbort = () => waker.wake();
      signal?.addEventListener('abort', onAbort);
      try {
        for (let first = true; ; first = false) {
          const carried = committed();
          // A run of this process's worker signals its outcome here, with the row, and a task its caller has just
          // submitted is known to be pending or running: wait for the signal rather than read the task first (the poll
          // below still reads, should the signal not come). One read less per synchronous webhook call.
          if (!carried && first && (justSubmitted || this.localSlots?.runningHere(organizationId, taskId))) {
            await waker.sleep(Math.min(this.pollMs, deadline - performance.now()));
            continue;
          }
          // The row a signal brought is as its writer committed it: no need to read it again.
          const row = carried ?? (await this.repo.find(organizationId, taskId));
          if (!row) throw AppError.notFound('Task');
          const left = deadline - performance.now();
          if (FINAL_STATUSES.has(row.status as TaskStatus) || row.status === 'paused' || left <= 0 || signal?.aborted) {
            return subExecutions ? presentWithChildren(this.repo, row) : presentTask(row);
          }
          await waker.sleep(Math.min(this.pollMs, left));
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    });
  }

  /**
   * Replays the trace after `afterSeq`, then follows it live until the task is final (or `abort` fires).
   * Each event carries its `seq`, usable as an SSE id to resume from.
   */
  async *follow(organizationId: string, taskId: string, afterSeq: number, abort: AbortSignal): AsyncGenerator<TaskEvent & { seq: number }> {
    const waker = new Waker();
    const off = this.signals.on((s) => {
      if (s.kind === 'task' && s.organizationId === organizationId && s.taskId === taskId) waker.wake();
    });
    const onAbort = () => waker.wake();
    abort.addEventListener('abort', onAbort);
    try {
      let cursor = afterSeq;
      while (!abort.aborted) {
        // Read the status first: events committed with a final status are all visible to the read after it.
        const row = await this.repo.find(organizationId, taskId);
        const batch = await this.repo.events(organizationId, taskId, cursor, EVENT_BATCH);
        for (const r of batch) {
          cursor = Number(r.seq);
          yield presentEvent(r);
        }
        if (batch.length === EVENT_BATCH) continue;
        if (!row || FINAL_STATUSES.has(row.status as TaskStatus)) return;
        await waker.sleep(this.pollMs);
      }
    } finally {
      off();
      abort.removeEventListener('abort', onAbort);
    }
  }


  /** Another process may finish the task: without notifications across processes, poll briskly. */
  private get pollMs(): number {
    return this.signals.crossProcess ? 1000 : 200;
  }

  /**
   * Wakes `fn`'s waker when the task's status changes (not for each event of its trace). `committed()` hands over,
   * once, the row the last such signal carried (in-process signals from the worker carry the row it committed).
   */
  private async watch<T>(organizationId: string, taskId: string, fn: (waker: Waker, committed: () => TaskRow | undefined) => Promise<T>): Promise<T> {
    const waker = new Waker();
    let carried: TaskRow | undefined;
    const off = this.signals.on((s) => {
      if (s.kind === 'task' && s.statusChanged && s.organizationId === organizationId && s.taskId === taskId) {
        carried = s.row;
        waker.wake();
      }
    });
    const committed = () => {
      const row = carried;
      carried = undefined;
      return row;
    };
    try {
      return await fn(waker, committed);
    } finally {
      off();
    }
  }
}
