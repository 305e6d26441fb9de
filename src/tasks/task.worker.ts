import { hostname } from 'node:os';
import type { Startable } from '../lib/lifecycle.js';
import { isAppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { randomToken } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { RunOutcome, RunRequest, TaskRunner } from '../runtime/task-runner.js';
import type { RunnableAgent, TaskAgentDirectory } from './task-agents.js';
import type { Lease, TaskQueueRepository } from './task-queue.repository.js';
import { eventRow, presentMessage, presentTask } from './task.presenter.js';
import type { TaskInbox } from './task-inbox.js';
import type { LocalSlots, SlotReservation } from './local-slots.js';
import { MAX_CALL_DEPTH } from './call-depth.js';
import { TaskSignals, Waker } from './task-signals.js';
import type { TaskRow, TasksRepository } from './tasks.repository.js';
import type { NewDeliveryRow, TaskEndNotifier } from './task-end-notifier.js';
import { abortExecution, TraceWriter, type Execution } from './task-execution.js';
import { failure, OutcomeRecorder } from './task-outcome-recorder.js';

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

/** A waiting parent lends its slot (parkWhile); this many per configured slot at most: a chain of MAX_CALL_DEPTH. */
const MAX_LENT_SLOTS_PER_SLOT = MAX_CALL_DEPTH;
/** How often a busy worker checks its tasks for stop requests and approval decisions (stop must land within 1 s). */
const CONTROL_MS = 250;
/** How long shutdown waits for aborted runs to hand their tasks back. */
const SHUTDOWN_GRACE_MS = 5000;
/** A run that ignores its abort signal (a tool stuck in a call) is given up after this, so its slot frees. */
const ABORT_GRACE_MS = 2000;

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
  /** Slots lent by runs waiting on a child task (parkWhile); bounded by MAX_LENT_SLOTS_PER_SLOT x concurrency. */
  private lent = 0;
  private readonly claimWaker = new Waker();
  private readonly controlWaker = new Waker();
  private active = false;
  /** A signal said a new task is in the inbox (task-inbox.ts): settle it before claiming. */
  private inboxPending = true;
  private loops: Promise<void>[] = [];
  private unsubscribe?: () => void;

  private readonly trace: TraceWriter;
  private readonly outcomes: OutcomeRecorder;

  constructor(private readonly d: TaskWorkerDeps) {
    this.trace = new TraceWriter(d);
    this.outcomes = new OutcomeRecorder({ ...d, trace: this.trace });
  }

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
    for (const e of this.running.values()) abortExecution(e, 'shutdown', this.d.log);
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
        abortExecution(e, 'lost', this.d.log);
        continue;
      }
      if (row.hitl_decision && e.approval) {
        const resolve = e.approval;
        e.approval = undefined;
        if (await this.d.queue.clearDecision(e.lease, now)) resolve(row.hitl_decision === 'approved');
        else abortExecution(e, 'lost', this.d.log);
      }
      if (now - e.lastBeat >= this.d.leaseMs / 3) {
        // An overloaded or blocked process lets leases run out: say so before another worker takes the task.
        if (now - e.lastBeat > this.d.leaseMs * 0.75) this.d.log.warn({ task_id: e.lease.taskId, since_ms: now - e.lastBeat }, 'task heartbeat is late');
        if (await this.d.queue.heartbeat(e.lease, now, this.d.leaseMs)) e.lastBeat = now;
        else abortExecution(e, 'lost', this.d.log);
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

  /** Slots neither running a task nor held for one being claimed or committed; a waiting parent's slot is lent. */
  private freeSlots(): number {
    return this.d.concurrency + this.lent - this.running.size - this.reserved;
  }

  /**
   * A run waiting for a child task lends its slot: otherwise parents waiting on children fill every slot and the
   * children, queued behind them, are never claimed (a chain of sub-agents as deep as the concurrency stalls until
   * the sub-agent timeout). Lending is bounded, so waiting runs cannot grow the in-flight runs without limit: past
   * the bound a parent waits holding its slot, as before.
   */
  private async parkWhile<T>(waiting: Promise<T>): Promise<T> {
    if (this.lent >= this.d.concurrency * MAX_LENT_SLOTS_PER_SLOT) return waiting;
    this.lent++;
    this.claimWaker.wake();
    try {
      return await waiting;
    } finally {
      this.lent--;
    }
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
    const k = key(lease.organizationId, lease.taskId);
    this.running.set(k, e);
    e.done = this.execute(row, e)
      .catch((err) => this.d.log.error({ err, task_id: row.id }, 'task execution failed'))
      .finally(() => {
        // A freed slot matters to the claim loop only if it had stopped claiming for want of one.
        const wasFull = this.running.size >= this.d.concurrency + this.lent;
        if (this.running.get(k) === e) this.running.delete(k);
        if (wasFull) this.claimWaker.wake();
      });
  }

  private async execute(row: TaskRow, e: Execution): Promise<void> {
    const log = this.d.log.child({ task_id: row.id, attempt: row.execution_attempts });
    this.trace.emit(e, 'task_updated', presentTask(row));
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
          this.trace.emit(e, type, data);
          return e.recorded;
        },
        requestApproval: (r) => this.requestApproval(e, r),
        parkWhile: (waiting) => this.parkWhile(waiting),
        run: Number(row.run),
        checkpoint: () => this.trace.flush(e),
      };
      outcome = await Promise.race([this.d.runner.run(req), rejectAfterAbort(e.abort.signal, ABORT_GRACE_MS)]);
    } catch (err) {
      if (e.abort.signal.aborted) return this.outcomes.afterAbort(e);
      if (isAppError(err) && err.code === 'not_found') outcome = failure('error', err.message);
      else {
        log.error({ err }, 'task runner threw');
        outcome = failure('error', 'The task failed because of an internal error');
      }
    }
    if (e.abort.signal.aborted) return this.outcomes.afterAbort(e);
    e.settling = true;
    await this.outcomes.record(e, row, outcome, agent);
  }

  /** Pauses the task until a person decides; a stop (or lost lease) meanwhile counts as a rejection. */
  private async requestApproval(e: Execution, r: { tool: string; arguments: Record<string, unknown> }): Promise<boolean> {
    const now = this.d.clock.now();
    const decided = new Promise<boolean>((resolve) => (e.approval = resolve));
    if (!(await this.d.queue.pause(e.lease, JSON.stringify({ tool: r.tool, arguments: r.arguments, requested_at: now }), now))) {
      abortExecution(e, 'lost', this.d.log);
      return false;
    }
    const row = await this.d.tasks.find(e.lease.organizationId, e.lease.taskId);
    if (row) {
      this.trace.emit(e, 'task_updated', presentTask(row), true);
      await this.trace.flush(e);
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
