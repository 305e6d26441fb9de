import { hostname } from 'node:os';
import type { Startable } from '../lib/lifecycle.js';
import { isAppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { randomToken } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { SecretBox } from '../lib/secret-box.js';
import { RunAbortedError, type RunOutcome, type RunRequest, type TaskRunner } from '../runtime/task-runner.js';
import type { RunnableAgent, TaskAgentDirectory } from './task-agents.js';
import type { Lease, TaskQueueRepository } from './task-queue.repository.js';
import { presentTask } from './task.presenter.js';
import type { TaskInbox } from './task-inbox.js';
import type { LocalSlots, SlotReservation } from './local-slots.js';
import type { TaskSignals } from './task-signals.js';
import type { TaskRow, TasksRepository } from './tasks.repository.js';
import type { TaskEndNotifier } from './task-end-notifier.js';
import { abortExecution, TraceWriter, type Execution } from './task-execution.js';
import { failure, OutcomeRecorder } from './task-outcome-recorder.js';
import { readThreadHistory, type SummaryCoverage } from './thread-history.js';
import { SlotLedger } from './slot-ledger.js';
import { TaskClaimer } from './task-claimer.js';
import { RunSupervisor } from './run-supervisor.js';
import { approvalExpiredMessage, deadlineMessage, notCounted, startWorkClock } from './run-deadline.js';

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
  /** Runs paused for approval that lend their slot (AGENTRY_MAX_PAUSED_RUNS). */
  maxPausedRuns: number;
  /** Paused runs of one organization past which its new tasks are not started here (AGENTRY_MAX_PAUSED_RUNS_PER_ORG; 0: none). */
  maxPausedRunsPerOrg: number;
  leaseMs: number;
  /** Longest a run may work, waits for a person or a child task excepted (run-deadline.ts); 0: no limit. */
  runTimeoutMs: number;
  /** Longest a run waits for a person's decision before its task ends `error`; 0: no limit. */
  approvalTimeoutMs?: number;
  /** Counts the runs stopped by their deadline (/metrics). */
  onRunTimedOut?: () => void;
  /** Plans the notifications of a task end, committed with its final status (docs/notifications.md). */
  notifier?: TaskEndNotifier;
  /** How far a thread's session summary reaches, so a run reads only the runs it does not cover (thread-history.ts). */
  summaryCoverage?: SummaryCoverage;
}

/** How long shutdown waits for aborted runs to hand their tasks back. */
const SHUTDOWN_GRACE_MS = 5000;
/** A run that ignores its abort signal (a tool stuck in a call) is given up after this, so its slot frees. */
const ABORT_GRACE_MS = 2000;

/**
 * The worker role: claims tasks with a lease and a fencing number, runs them through the TaskRunner with the
 * configured concurrency, heart-beats, and records what comes back. A task whose worker died is claimed again
 * once its lease runs out; a stopped or reclaimed task's old worker aborts and all of its writes are refused.
 *
 * Its parts, each built from a deps object, with dependencies one way: SlotLedger (slot-ledger.ts: the runs held,
 * reserved and lent slots; it imports none of the others), TaskClaimer (task-claimer.ts: the claim loop, over the
 * ledger), RunSupervisor (run-supervisor.ts: heartbeats, stops and approval decisions for the ledger's runs),
 * TraceWriter and OutcomeRecorder (task-execution.ts, task-outcome-recorder.ts: a run's trace and outcome). This
 * class wires them, answers LocalSlots, and runs what is claimed.
 */
export class TaskWorker implements Startable, LocalSlots {
  readonly owner = `${hostname()}:${process.pid}:${randomToken(6)}`;
  private active = false;
  private unsubscribe?: () => void;

  private readonly slots: SlotLedger;
  private readonly claimer: TaskClaimer;
  private readonly supervisor: RunSupervisor;
  private readonly trace: TraceWriter;
  private readonly outcomes: OutcomeRecorder;

  constructor(private readonly d: TaskWorkerDeps) {
    // The claimer is built next and needs the ledger; the ledger reaches it through this closure, at call time.
    this.slots = new SlotLedger({
      concurrency: d.concurrency,
      maxPausedRuns: d.maxPausedRuns,
      maxPausedRunsPerOrg: d.maxPausedRunsPerOrg,
      slotFreed: () => this.claimer.wake(),
      organizationReleased: () => this.claimer.organizationReleased(),
    });
    this.claimer = new TaskClaimer({ ...d, owner: this.owner, slots: this.slots, launch: (row) => this.launch(row) });
    this.supervisor = new RunSupervisor({ ...d, owner: this.owner, slots: this.slots });
    this.trace = new TraceWriter(d);
    this.outcomes = new OutcomeRecorder({ ...d, trace: this.trace });
  }

  async start(): Promise<void> {
    if (this.active) return;
    this.active = true;
    this.unsubscribe = this.d.signals.on((s) => {
      if (s.kind === 'queued') this.claimer.taskQueued(s.inbox, s.interleaved);
      // Stops and decisions change the status; the trace events this worker appends itself do not, and neither does
      // the outcome a settling run has just recorded (checking it would cost a query per run for nothing).
      else if (s.statusChanged) this.supervisor.statusChanged(s.organizationId, s.taskId);
    });
    this.claimer.start();
    this.supervisor.start();
  }

  async stop(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    this.unsubscribe?.();
    const loops = [this.claimer.halt(), this.supervisor.halt()];
    for (const e of this.slots.executions()) abortExecution(e, 'shutdown', this.d.log);
    const runs = Promise.all(this.slots.executions().map((e) => e.done));
    await Promise.race([runs, new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS).unref())]);
    await Promise.all(loops);
  }

  /**
   * LocalSlots: an awaited submission is committed already claimed by this worker and run at once. Not a new task of
   * an organization held back for its paused runs (SlotLedger.heldBack): it is committed pending, as when every slot
   * is taken, and claimed once the organization is back under its bound. A child task (`child`) always may.
   */
  reserve(organizationId: string, child: boolean): SlotReservation | undefined {
    if (!this.active || this.slots.freeSlots() <= 0 || (!child && this.slots.holdsBack(organizationId))) return undefined;
    const free = this.slots.hold(1);
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

  /** Organizations whose new tasks this worker does not start now, for their paused runs (/metrics). */
  get heldBackOrganizations(): number {
    return this.slots.heldBack().length;
  }

  /** LocalSlots: a run that has not begun recording its outcome (record publishes it, with the row). */
  runningHere(organizationId: string, taskId: string): boolean {
    return this.slots.runningHere(organizationId, taskId);
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
    const now = this.d.clock.now();
    const e = { lease, abort: new AbortController(), lastBeat: now, work: startWorkClock(now, this.d.runTimeoutMs), settling: false, buffered: [], bufferedStatusChange: false } as unknown as Execution;
    e.unrecorded = committed !== undefined;
    e.recorded = committed
      ? committed.then((ok) => {
          if (!ok) {
            abortExecution(e, 'unrecorded', this.d.log);
            throw e.abort.signal.reason;
          }
          e.unrecorded = false;
          e.lastBeat = this.d.clock.now();
        })
      : Promise.resolve();
    // The trace chain waits for the commit but never fails with it: an unrecorded run writes nothing (its aborted
    // run never reaches the outcome, and a write of its events would find no task).
    e.trace = e.recorded.catch(() => undefined);
    this.slots.add(e);
    e.done = this.execute(row, e)
      .catch((err) => this.d.log.error({ err, task_id: row.id }, 'task execution failed'))
      .finally(() => this.slots.remove(e));
  }

  private async execute(row: TaskRow, e: Execution): Promise<void> {
    this.trace.emit(e, 'task_updated', presentTask(row));
    let agent: RunnableAgent | undefined;
    let outcome: RunOutcome;
    try {
      const version = row.agent_version === 'draft' ? 'draft' : Number(row.agent_version);
      agent = await this.d.agents.getRunnable(row.organization_id, row.agent_id, version);
      const history = await readThreadHistory(this.d, { organizationId: row.organization_id, taskId: row.id, run: Number(row.run) }, agent.config);
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
          this.trace.emit(e, type, data);
          return e.recorded;
        },
        // Waits for a person or a child task do not count against the run's deadline (run-deadline.ts).
        requestApproval: (r) => notCounted(e.work, this.now, this.requestApproval(e, r)),
        parkWhile: (waiting) => notCounted(e.work, this.now, this.slots.parkWhile(waiting)),
        run: Number(row.run),
        checkpoint: () => this.trace.flush(e),
      };
      outcome = await Promise.race([this.d.runner.run(req), rejectAfterAbort(e.abort.signal, ABORT_GRACE_MS)]);
    } catch (err) {
      // A run stopped by its deadline that gave up with what it had spent (RunAbortedError), or did not return in time.
      if (e.reason === 'timeout' || e.reason === 'approval-expired') outcome = err instanceof RunAbortedError ? { ...failure('error', ''), tokens: err.tokens, messages: err.messages } : failure('error', '');
      else if (e.abort.signal.aborted) return this.outcomes.afterAbort(e);
      else if (isAppError(err) && err.code === 'not_found') outcome = failure('error', err.message);
      else {
        // A child logger is made only here: built per run, pino's redaction of its bindings was ~0.5% of a run's CPU.
        this.d.log.child({ task_id: row.id, attempt: row.execution_attempts }).error({ err }, 'task runner threw');
        outcome = failure('error', 'The task failed because of an internal error');
      }
    }
    if (e.reason === 'timeout') {
      // A run that finished anyway keeps its answer; one that turned the abort into a failure of its own ends with the deadline's.
      if (outcome.status !== 'completed') outcome = { ...outcome, status: 'error', result: deadlineMessage(this.d.runTimeoutMs) };
      this.d.onRunTimedOut?.();
    } else if (e.reason === 'approval-expired') {
      // The call waiting for the decision was not made: whatever the run answered after its rejection, the task ends so.
      outcome = { ...outcome, status: 'error', result: approvalExpiredMessage(e.approvalFor ?? 'a tool', this.d.approvalTimeoutMs ?? 0) };
    } else if (e.abort.signal.aborted) return this.outcomes.afterAbort(e);
    e.settling = true;
    await this.outcomes.record(e, row, outcome, agent);
  }

  private readonly now = () => this.d.clock.now();

  /** Pauses the task until a person decides; a stop (or lost lease) meanwhile counts as a rejection. */
  private async requestApproval(e: Execution, r: { tool: string; arguments: Record<string, unknown> }): Promise<boolean> {
    const now = this.d.clock.now();
    const decided = new Promise<boolean>((resolve) => (e.approval = resolve));
    e.approvalAskedAt = now;
    e.approvalFor = r.tool;
    if (!(await this.d.queue.pause(e.lease, JSON.stringify({ tool: r.tool, arguments: r.arguments, requested_at: now }), now))) {
      abortExecution(e, 'lost', this.d.log);
      return false;
    }
    const row = await this.d.tasks.find(e.lease.organizationId, e.lease.taskId);
    if (row) {
      this.trace.emit(e, 'task_updated', presentTask(row), true);
      await this.trace.flush(e);
    }
    return this.slots.parkForApproval(e.lease.organizationId, decided);
  }
}

function rejectAfterAbort(signal: AbortSignal, graceMs: number): Promise<never> {
  return new Promise((_resolve, reject) => {
    const arm = () => setTimeout(() => reject(new Error('the run did not end after its abort')), graceMs).unref();
    if (signal.aborted) arm();
    else signal.addEventListener('abort', arm, { once: true });
  });
}
