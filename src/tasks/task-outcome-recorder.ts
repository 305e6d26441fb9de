import { GroupCommit } from '../lib/group-commit.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { withoutNul } from '../lib/nul-text.js';
import type { RunOutcome } from '../runtime/task-runner.js';
import { taskStrategies, type RunnableAgent } from './task-agents.js';
import type { TaskEndNotifier } from './task-end-notifier.js';
import type { Execution, TraceWriter } from './task-execution.js';
import type { FinalEvent, FinishFields, FinishItem, TaskQueueRepository } from './task-queue.repository.js';
import { eventRow, parseTimeMs, presentTask } from './task.presenter.js';
import type { TaskSignals } from './task-signals.js';
import type { TaskRow, TasksRepository } from './tasks.repository.js';

/** Outcomes per commit at most: a worker runs at most 256 tasks at once (AGENTRY_WORKER_CONCURRENCY). */
const OUTCOME_BATCH = 256;
/** A run's last trace event: the task as its outcome leaves it. */
const FINISHED_EVENT: FinalEvent = { type: 'task_finished', data: (r) => JSON.stringify(presentTask(r)) };

export interface OutcomeRecorderDeps {
  queue: TaskQueueRepository;
  tasks: TasksRepository;
  signals: TaskSignals;
  clock: Clock;
  log: Logger;
  trace: TraceWriter;
  notifier?: TaskEndNotifier;
}

/**
 * How a run ends, recorded: its outcome, thread messages and the rest of its trace in one fenced write (or a retry
 * back in the queue), and the task-end notifications with it.
 */
export class OutcomeRecorder {
  /**
   * Outcomes of runs that end together are committed together (GroupCommit): one commit, and on PostgreSQL one
   * statement, for all of them. A run never waits for a batch to fill: the first outcome is written at once, and
   * those that end while it is being written go together in the next write.
   */
  private readonly outcomes = new GroupCommit<FinishItem, TaskRow | undefined>((items) => this.d.queue.finishMany(items), OUTCOME_BATCH);

  constructor(private readonly d: OutcomeRecorderDeps) {}

  async record(e: Execution, row: TaskRow, outcome: RunOutcome, agent: RunnableAgent | undefined): Promise<void> {
    // Every event of the run is committed before or with the outcome, so task_finished is the trace's last word.
    clearTimeout(e.flushTimer);
    e.flushTimer = undefined;
    // An event emitted after the run returned (a late callback) may start one more flush while this waits: every
    // chained write must be done before the rest is taken.
    for (let t = e.trace; ; t = e.trace) {
      await t;
      if (t === e.trace) break;
    }
    // A run that returned before its submission's commit failed: there is no task to record it in.
    if (e.reason === 'unrecorded') return;
    const trace = e.buffered.splice(0);
    const now = this.d.clock.now();
    const tokens = outcome.tokens ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    const retry = outcome.status === 'error' && agent && taskStrategies(agent.config).retryOnError && row.execution_attempts < row.max_attempts;
    if (retry) {
      // Exponential back-off between whole-run retries: 1 s, 2 s, 4 s ... at most 30 s.
      const at = now + Math.min(30_000, 1000 * 2 ** (row.execution_attempts - 1));
      if (!(await this.d.queue.appendEvents(e.lease, trace))) return;
      const requeued = await this.d.queue.requeue(e.lease, at, now, { refundAttempt: false, tokens });
      if (requeued) {
        await this.d.tasks.appendEvent(undefined, eventRow(requeued, 'task_updated', now, { ...presentTask(requeued), retry_reason: outcome.result }));
        this.d.signals.publish({ kind: 'task', organizationId: row.organization_id, taskId: row.id, statusChanged: true });
      }
      return;
    }
    const fields: FinishFields = {
      status: outcome.status,
      result: withoutNul(outcome.result),
      tokens,
      llm_model_provider: outcome.llm_model_provider,
      llm_model_name: outcome.llm_model_name,
    };
    const messages = (outcome.messages ?? []).map((m) => ({
      organization_id: row.organization_id,
      task_id: row.id,
      run: row.run,
      role: m.role,
      content: m.content === null || m.content === undefined ? m.content : withoutNul(m.content),
      tool_calls: m.tool_calls ? JSON.stringify(m.tool_calls) : null,
      tool_call_id: m.tool_call_id ? withoutNul(m.tool_call_id) : null,
      created_at: parseTimeMs(m.created_at, now),
    }));
    const outbox = this.d.notifier?.plan({
      status: fields.status,
      agentConfig: agent?.config,
      callbackUrl: row.callback_url,
      // The row as the outcome leaves it (finishMany applies the same fields; tokens add up over retries).
      view: () => ({
        ...row,
        status: fields.status,
        result: fields.result,
        prompt_tokens: Number(row.prompt_tokens) + tokens.prompt_tokens,
        completion_tokens: Number(row.completion_tokens) + tokens.completion_tokens,
        total_tokens: Number(row.total_tokens) + tokens.total_tokens,
        llm_model_provider: fields.llm_model_provider,
        llm_model_name: fields.llm_model_name,
        finished_at: now,
      }),
    });
    const withOutbox = outbox && outbox.length ? outbox : undefined;
    const done = await this.outcomes.add({ lease: e.lease, fields, messages, trace, event: FINISHED_EVENT, now, claimed: row, outbox: withOutbox });
    if (done && withOutbox) this.d.notifier!.committed();
    if (!done) this.d.log.warn({ task_id: row.id }, 'task outcome discarded: the task was stopped or taken over');
    this.d.signals.publish({ kind: 'task', organizationId: row.organization_id, taskId: row.id, statusChanged: true, row: done });
  }

  /** A shutdown hands the task straight back to the queue without counting the attempt; a lost task is someone else's. */
  async afterAbort(e: Execution): Promise<void> {
    if (e.reason !== 'shutdown') return;
    await this.d.trace.flush(e);
    const now = this.d.clock.now();
    const row = await this.d.queue.requeue(e.lease, now, now, { refundAttempt: true });
    if (row) this.d.signals.publish({ kind: 'queued' });
  }
}

/** An outcome the worker makes itself, when the run could not produce one. */
export function failure(status: RunOutcome['status'], result: string): RunOutcome {
  return { status, result, tokens: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, messages: [], llm_model_provider: null, llm_model_name: null };
}
