import { hostname } from 'node:os';
import type { Startable } from '../container.js';
import { isAppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { randomToken } from '../lib/ids.js';
import { GroupCommit } from '../lib/group-commit.js';
import type { Logger } from '../lib/logger.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { RunOutcome, RunRequest, TaskRunner } from '../runtime/task-runner.js';
import { taskStrategies, type RunnableAgent, type TaskAgentDirectory } from './task-agents.js';
import type { FinalEvent, FinishFields, FinishItem, Lease, TaskQueueRepository, TraceEvent } from './task-queue.repository.js';
import { eventRow, parseTimeMs, presentMessage, presentTask } from './task.presenter.js';
import type { TaskInbox } from './task-inbox.js';
import type { LocalSlots, SlotReservation } from './local-slots.js';
import { TaskSignals, Waker } from './task-signals.js';
import type { TaskEvent } from './task.types.js';
import type { TaskRow, TasksRepository } from './tasks.repository.js';
import { withoutNul } from '../lib/nul-text.js';
import type { NewDeliveryRow, TaskEndNotifier } from './task-end-notifier.js';

export interface TaskWorkerDeps {
  queue: TaskQueueRepository;
  inbox: TaskInbox;
  tasks: TasksRepository;
  signals: TaskSignals;
  agents: TaskAgentDirectory;
  runner: TaskRunner;
  secretBox: SecretBox;
  clock: Clock;
  log: Logger;
  concurrency: number;
  leaseMs: number;
  /** Plans the notifications of a task end, committed with its final status (docs/notifications.md). */
  notifier?: TaskEndNotifier;
}

/** How often a busy worker checks its tasks for stop requests and approval decisions (stop must land within 1 s). */
const CONTROL_MS = 250;
/**
 * How long a run's trace events wait to be written together. A quick run's events all go into the transaction that
 * records its outcome; a long run's reach the trace (and the console's live view) in batches this far apart.
 */
const TRACE_FLUSH_MS = 25;
/** Outcomes per commit at most: a worker runs at most 256 tasks at once (AGENTRY_WORKER_CONCURRENCY). */
const OUTCOME_BATCH = 256;
/** A run's last trace event: the task as its outcome leaves it. */
const FINISHED_EVENT: FinalEvent = { type: 'task_finished', data: (r) => JSON.stringify(presentTask(r)) };
/** How long shutdown waits for aborted runs to hand their tasks back. */
const SHUTDOWN_GRACE_MS = 5000;
/** A run that ignores its abort signal (a tool stuck in a call) is given up after this, so its slot frees. */
const ABORT_GRACE_MS = 2000;

/** `unrecorded`: the run started beside its submission's commit (LocalSlots), and the commit failed. */
type AbortReason = 'lost' | 'shutdown' | 'unrecorded';
/** What the run's abort signal says, by reason. */
const ABORT_MESSAGES: Record<AbortReason, string> = {
  lost: 'The task was stopped or taken over',
  shutdown: 'The worker is shutting down',
  unrecorded: 'The task could not be recorded',
};

interface Execution {
  lease: Lease;
  abort: AbortController;
  reason?: AbortReason;
  lastBeat: number;
  approval?: (approved: boolean) => void;
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

/**
 * The worker role: claims tasks with a lease and a fencing number, runs them through the TaskRunner with the
 * configured concurrency, heart-beats, and records what comes back. A task whose worker died is claimed again
 * once its lease runs out; a stopped or reclaimed task's old worker aborts and all of its writes are refused.
 */
export class TaskWorker implements Startable, LocalSlots {
  readonly owner = `${hostname()}:${process.pid}:${randomToken(6)}`;
  private readonly running = new Map<string, Execution>();
  /** Slots held for awaited submissions being committed (see reserve) and for tasks being claimed. */
  private reserved = 0;
  /**
   * Outcomes of runs that end together are committed together (GroupCommit): one commit, and on PostgreSQL one
   * statement, for all of them. A run never waits for a batch to fill: the first outcome is written at once, and
   * those that end while it is being written go together in the next write.
   */
  private readonly outcomes = new GroupCommit<FinishItem, TaskRow | undefined>((items) => this.d.queue.finishMany(items), OUTCOME_BATCH);
  private readonly claimWaker = new Waker();
  private readonly controlWaker = new Waker();
  private active = false;
  /** A signal said a new task is in the inbox (task-inbox.ts): settle it before claiming. */
  private inboxPending = true;
  private loops: Promise<void>[] = [];
  private unsubscribe?: () => void;

  constructor(private readonly d: TaskWorkerDeps) {}

  async start(): Promise<void> {
    if (this.active) return;
    this.active = true;
    this.unsubscribe = this.d.signals.on((s) => {
      if (s.kind === 'queued') {
        if (s.inbox) this.inboxPending = true;
        this.claimWaker.wake();
      }
      // Stops and decisions change the status; the trace events this worker appends itself do not, and neither does
      // the outcome a settling run has just recorded (checking it would cost a query per run for nothing).
      else if (s.statusChanged && this.running.get(key(s.organizationId, s.taskId))?.settling === false) this.controlWaker.wake();
    });
    this.loops = [this.claimLoop(), this.controlLoop()];
  }

  async stop(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    this.unsubscribe?.();
    this.claimWaker.wake();
    this.controlWaker.wake();
    for (const e of this.running.values()) this.abort(e, 'shutdown');
    const runs = Promise.all([...this.running.values()].map((e) => e.done));
    await Promise.race([runs, new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS).unref())]);
    await Promise.all(this.loops);
  }

  /** Idle polling also finds expired leases; on PostgreSQL new tasks arrive by notification. */
  private get pollMs(): number {
    return this.d.signals.crossProcess ? 1000 : 250;
  }

  /**
   * New tasks are claimed as soon as they are signalled. Dead workers' tasks (expired leases) are looked for
   * once per poll interval, with the sweep: recovery waits at most that long, and a busy worker does not pay
   * three extra queries for every task it claims.
   */
  private async claimLoop(): Promise<void> {
    let lastRecovery = -Infinity;
    while (this.active) {
      try {
        const recover = this.d.clock.now() - lastRecovery >= this.pollMs;
        if (recover) {
          lastRecovery = this.d.clock.now();
          await this.sweep();
        }
        // Every poll interval too: on SQLite another process's inbox entries come with no signal. Only with a free
        // slot: a worker whose slots are all busy (a slow model) would otherwise move the inbox a few entries at a
        // time on every accepted call, on the accept's own thread in the default deployment; a freed slot wakes
        // this loop (`wasFull`), and the pending flag makes that pass settle everything accepted meanwhile at once.
        if ((this.inboxPending || recover) && this.freeSlots() > 0) {
          // Only what the free slots can start: the rest stays in the inbox (cheap) until a slot or a reader needs it.
          const free = this.freeSlots();
          const moved = await this.d.inbox.settleOldest(free);
          this.inboxPending = moved === free;
        }
        while (this.active && this.freeSlots() > 0) {
          const now = this.d.clock.now();
          const kind = await this.d.queue.nextClaimable(now, recover);
          if (kind === undefined) break;
          const free = this.freeSlots();
          // Held while the claim is in flight, so an awaited submission (reserve) cannot take them meanwhile.
          this.reserved += free;
          let rows: TaskRow[];
          try {
            rows =
              kind === 'expired'
                ? [await this.d.queue.claimExpired(this.owner, now, this.d.leaseMs)].filter((r): r is TaskRow => r !== undefined)
                : await this.d.queue.claimPendingBatch(this.owner, now, this.d.leaseMs, free);
          } finally {
            this.reserved -= free;
          }
          for (const row of rows) this.launch(row);
          // Fewer than asked: nothing more is due now (an expired lease is claimed one at a time, then look again).
          if (rows.length === 0 || (kind === 'pending' && rows.length < free)) break;
        }
      } catch (err) {
        this.d.log.error({ err }, 'task claim failed; retrying');
      }
      await this.claimWaker.sleep(this.pollMs);
    }
  }

  /** Heartbeats, stop detection and approval decisions for the tasks this worker holds. */
  private async controlLoop(): Promise<void> {
    while (this.active) {
      if (this.running.size > 0) {
        try {
          await this.control();
        } catch (err) {
          this.d.log.warn({ err }, 'task control check failed');
        }
      }
      await this.controlWaker.sleep(CONTROL_MS);
    }
  }

  private async control(): Promise<void> {
    // Only executions that existed before the read: one launched meanwhile is not in its answer yet.
    const checked = [...this.running];
    const owned = new Map((await this.d.queue.owned(this.owner)).map((r) => [key(r.organization_id, r.id), r]));
    const now = this.d.clock.now();
    for (const [k, e] of checked) {
      if (e.abort.signal.aborted || e.settling || e.unrecorded) continue;
      const row = owned.get(k);
      if (!row || Number(row.fence) !== e.lease.fence || !['executing', 'paused'].includes(row.status)) {
        this.abort(e, 'lost');
        continue;
      }
      if (row.hitl_decision && e.approval) {
        const resolve = e.approval;
        e.approval = undefined;
        if (await this.d.queue.clearDecision(e.lease, now)) resolve(row.hitl_decision === 'approved');
        else this.abort(e, 'lost');
      }
      if (now - e.lastBeat >= this.d.leaseMs / 3) {
        // An overloaded or blocked process lets leases run out: say so before another worker takes the task.
        if (now - e.lastBeat > this.d.leaseMs * 0.75) this.d.log.warn({ task_id: e.lease.taskId, since_ms: now - e.lastBeat }, 'task heartbeat is late');
        if (await this.d.queue.heartbeat(e.lease, now, this.d.leaseMs)) e.lastBeat = now;
        else this.abort(e, 'lost');
      }
    }
  }

  /** Ends tasks whose workers died too often. */
  private async sweep(): Promise<void> {
    const now = this.d.clock.now();
    const ended = await this.d.queue.sweepExhausted(
      now,
      (n) => `The task was abandoned: the worker running it stopped responding (${n} attempts)`,
      this.d.notifier ? (r) => this.planSweep(r) : undefined,
    );
    if (ended.length) this.d.notifier?.committed();
    for (const row of ended) {
      await this.d.tasks.appendEvent(undefined, eventRow(row, 'task_finished', now, presentTask(row)));
      this.d.signals.publish({ kind: 'task', organizationId: row.organization_id, taskId: row.id, statusChanged: true });
    }
  }

  /** The notifications of a task the sweep ends: its agent's settings as they are now (the run's are gone with it). */
  private async planSweep(r: TaskRow): Promise<NewDeliveryRow[]> {
    const version = r.agent_version === 'draft' ? 'draft' : Number(r.agent_version);
    const agent = await this.d.agents.getRunnable(r.organization_id, r.agent_id, version).catch(() => undefined);
    return this.d.notifier!.plan({ status: r.status, agentConfig: agent?.config, callbackUrl: r.callback_url, view: () => r });
  }

  /** Slots neither running a task nor held for one being claimed or committed. */
  private freeSlots(): number {
    return this.d.concurrency - this.running.size - this.reserved;
  }

  /** LocalSlots: an awaited submission is committed already claimed by this worker and run at once. */
  reserve(): SlotReservation | undefined {
    if (!this.active || this.freeSlots() <= 0) return undefined;
    this.reserved++;
    let held = true;
    const free = () => {
      if (held) this.reserved--;
      held = false;
    };
    return {
      // Exactly what claimPending sets on a new task (fence and attempts from 0 to 1).
      claim: (now) => ({
        status: 'executing',
        lease_owner: this.owner,
        lease_expires_at: now + this.d.leaseMs,
        heartbeat_at: now,
        fence: 1,
        execution_attempts: 1,
        started_at: now,
      }),
      start: (row, committed) => {
        free();
        if (this.active) return this.launch(row, committed);
        void committed.then((ok) => (ok ? this.handBack(row) : undefined));
      },
    };
  }

  /** LocalSlots: a run that has not begun recording its outcome (record publishes it, with the row). */
  runningHere(organizationId: string, taskId: string): boolean {
    const e = this.running.get(key(organizationId, taskId));
    return !!e && !e.settling && !e.abort.signal.aborted;
  }

  /** A task committed as this worker's after it began to stop: back to the queue at once, the attempt refunded. */
  private async handBack(row: TaskRow): Promise<void> {
    const now = this.d.clock.now();
    try {
      if (await this.d.queue.requeue({ organizationId: row.organization_id, taskId: row.id, fence: Number(row.fence) }, now, now, { refundAttempt: true })) {
        this.d.signals.publish({ kind: 'queued' });
      }
    } catch (err) {
      // Its lease runs out and another worker claims it.
      this.d.log.warn({ err, task_id: row.id }, 'could not hand a task back to the queue on shutdown');
    }
  }

  /** Runs a claimed task; `committed` when it was started beside its submission's commit (see reserve). */
  private launch(row: TaskRow, committed?: Promise<boolean>): void {
    const lease: Lease = { organizationId: row.organization_id, taskId: row.id, fence: Number(row.fence) };
    const e = { lease, abort: new AbortController(), lastBeat: this.d.clock.now(), settling: false, buffered: [], bufferedStatusChange: false } as unknown as Execution;
    e.unrecorded = committed !== undefined;
    e.recorded = committed
      ? committed.then((ok) => {
          if (!ok) {
            this.abort(e, 'unrecorded');
            throw e.abort.signal.reason;
          }
          e.unrecorded = false;
          e.lastBeat = this.d.clock.now();
        })
      : Promise.resolve();
    // The trace chain waits for the commit but never fails with it: an unrecorded run writes nothing (its aborted
    // run never reaches the outcome, and a write of its events would find no task).
    e.trace = e.recorded.catch(() => undefined);
    const k = key(lease.organizationId, lease.taskId);
    this.running.set(k, e);
    e.done = this.execute(row, e)
      .catch((err) => this.d.log.error({ err, task_id: row.id }, 'task execution failed'))
      .finally(() => {
        // A freed slot matters to the claim loop only if it had stopped claiming for want of one.
        const wasFull = this.running.size >= this.d.concurrency;
        if (this.running.get(k) === e) this.running.delete(k);
        if (wasFull) this.claimWaker.wake();
      });
  }

  private abort(e: Execution, reason: AbortReason): void {
    if (e.abort.signal.aborted) return;
    if (reason === 'lost') this.d.log.warn({ task_id: e.lease.taskId, fence: e.lease.fence }, 'task was stopped or taken over; aborting its run');
    e.reason = reason;
    e.abort.abort(new Error(ABORT_MESSAGES[reason]));
    e.approval?.(false);
  }

  private async execute(row: TaskRow, e: Execution): Promise<void> {
    const { lease } = e;
    const log = this.d.log.child({ task_id: row.id, attempt: row.execution_attempts });
    this.emit(e, 'task_updated', presentTask(row));
    let agent: RunnableAgent | undefined;
    let outcome: RunOutcome;
    try {
      const version = row.agent_version === 'draft' ? 'draft' : Number(row.agent_version);
      agent = await this.d.agents.getRunnable(row.organization_id, row.agent_id, version);
      // A first run has no earlier messages to read.
      const history = row.run > 1 ? (await this.d.queue.history(row.organization_id, row.id, row.run)).map(presentMessage) : [];
      const req: RunRequest = {
        task: presentTask(row),
        agent: agent.config,
        history,
        extras: {
          userTokens: row.sealed_user_tokens ? this.d.secretBox.openJson<Record<string, string>>(row.sealed_user_tokens) : undefined,
          disableAttachmentInjection: Number(row.disable_attachment_injection) === 1,
          instructionsOverride: row.instructions_override,
          expectedOutput: row.expected_output,
        },
        signal: e.abort.signal,
        // The run does not wait for its trace to be written (see emit), only for its task to be (see recorded).
        emit: (type, data) => {
          this.emit(e, type, data);
          return e.recorded;
        },
        requestApproval: (r) => this.requestApproval(e, r),
        run: Number(row.run),
        checkpoint: () => this.flushTrace(e),
      };
      outcome = await Promise.race([this.d.runner.run(req), rejectAfterAbort(e.abort.signal, ABORT_GRACE_MS)]);
    } catch (err) {
      if (e.abort.signal.aborted) return this.afterAbort(e);
      if (isAppError(err) && err.code === 'not_found') outcome = failure('error', err.message);
      else {
        log.error({ err }, 'task runner threw');
        outcome = failure('error', 'The task failed because of an internal error');
      }
    }
    if (e.abort.signal.aborted) return this.afterAbort(e);
    e.settling = true;
    await this.record(e, row, outcome, agent);
  }

  private async record(e: Execution, row: TaskRow, outcome: RunOutcome, agent: RunnableAgent | undefined): Promise<void> {
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
  private async afterAbort(e: Execution): Promise<void> {
    if (e.reason !== 'shutdown') return;
    await this.flushTrace(e);
    const now = this.d.clock.now();
    const row = await this.d.queue.requeue(e.lease, now, now, { refundAttempt: true });
    if (row) this.d.signals.publish({ kind: 'queued' });
  }

  /**
   * Buffers a trace event; the run does not wait for it. Buffered events are written together, TRACE_FLUSH_MS
   * after the first of them, in one statement (on PostgreSQL each write is a round trip, on SQLite a commit, and a
   * run emits about ten), or with the outcome when the run ends first. Writes are chained per run, so events keep
   * their order; the event's time and data are taken now. A write the fence refuses means the task was stopped or
   * taken over: the run aborts, as it would have on its next control check. A failing write (the database) aborts
   * it the same way; its lease then runs out and the task is claimed again, as after a crash. A crash of this
   * process loses at most the last TRACE_FLUSH_MS of the trace of a run that is claimed again.
   */
  private emit(e: Execution, type: TaskEvent['type'], data: object, statusChanged = false): void {
    e.buffered.push({ type, time: this.d.clock.now(), data: JSON.stringify(data) });
    e.bufferedStatusChange ||= statusChanged;
    e.flushTimer ??= setTimeout(() => void this.flushTrace(e), TRACE_FLUSH_MS);
  }

  /** Writes the buffered events now; resolves when every event emitted so far is written (or refused). */
  private flushTrace(e: Execution): Promise<void> {
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
        if (!(await this.d.queue.appendEvents(e.lease, batch))) this.abort(e, 'lost');
        else this.d.signals.publish({ kind: 'task', organizationId: e.lease.organizationId, taskId: e.lease.taskId, statusChanged });
      } catch (err) {
        this.d.log.error({ err, task_id: e.lease.taskId }, 'could not record a trace event; abandoning the run');
        this.abort(e, 'lost');
      }
    };
    e.trace = e.trace.then(write);
    return e.trace;
  }

  /** Pauses the task until a person decides; a stop (or lost lease) meanwhile counts as a rejection. */
  private async requestApproval(e: Execution, r: { tool: string; arguments: Record<string, unknown> }): Promise<boolean> {
    const now = this.d.clock.now();
    const decided = new Promise<boolean>((resolve) => (e.approval = resolve));
    if (!(await this.d.queue.pause(e.lease, JSON.stringify({ tool: r.tool, arguments: r.arguments, requested_at: now }), now))) {
      this.abort(e, 'lost');
      return false;
    }
    const row = await this.d.tasks.find(e.lease.organizationId, e.lease.taskId);
    if (row) {
      this.emit(e, 'task_updated', presentTask(row), true);
      await this.flushTrace(e);
    }
    return decided;
  }
}

function key(orgId: string, taskId: string): string {
  return `${orgId}\u0000${taskId}`;
}

function rejectAfterAbort(signal: AbortSignal, graceMs: number): Promise<never> {
  return new Promise((_resolve, reject) => {
    const arm = () => setTimeout(() => reject(new Error('the run did not end after its abort')), graceMs).unref();
    if (signal.aborted) arm();
    else signal.addEventListener('abort', arm, { once: true });
  });
}

function failure(status: RunOutcome['status'], result: string): RunOutcome {
  return { status, result, tokens: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, messages: [], llm_model_provider: null, llm_model_name: null };
}
