import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { WakeableLoop } from '../lib/wakeable-loop.js';
import type { SlotLedger } from './slot-ledger.js';
import type { TaskAgentDirectory } from './task-agents.js';
import type { NewDeliveryRow, TaskEndNotifier } from './task-end-notifier.js';
import type { TaskInbox } from './task-inbox.js';
import type { TaskQueueRepository } from './task-queue.repository.js';
import { eventRow, presentTask } from './task.presenter.js';
import type { TaskSignals } from './task-signals.js';
import type { TaskRow, TasksRepository } from './tasks.repository.js';

export interface TaskClaimerDeps {
  queue: TaskQueueRepository;
  inbox: TaskInbox;
  tasks: TasksRepository;
  signals: TaskSignals;
  agents: TaskAgentDirectory;
  clock: Clock;
  log: Logger;
  leaseMs: number;
  /** The worker's lease owner, written on every claim. */
  owner: string;
  slots: SlotLedger;
  /** Runs a claimed task (TaskWorker.launch); it takes its slot in `slots` before returning. */
  launch: (row: TaskRow) => void;
  /** Plans the notifications of a task end, committed with its final status (docs/notifications.md). */
  notifier?: TaskEndNotifier;
}

/**
 * The worker's claim loop (task.worker.ts): ends tasks whose workers died too often, settles the task inbox into
 * the free slots, and claims new tasks and tasks whose lease ran out, as many as the slots in `slots` allow, none
 * of an organization held back for its paused runs (`slots.heldBack`; a task whose lease ran out is claimed all
 * the same: it was admitted already).
 */
export class TaskClaimer {
  /** A signal said a new task is in the inbox (task-inbox.ts): settle it before claiming. */
  private inboxPending = true;
  /**
   * A signal said the inbox may hold several organizations' tasks (TaskInbox.interleaves): the next pass with a free
   * slot moves all of it rather than the oldest entries, so that a task behind another organization's backlog in the
   * inbox is ranked (fair claims) and claimed in its turn, not after that backlog. Set at start too: the inbox may
   * hold anything then.
   */
  private inboxInterleaved = true;
  /**
   * A pending task may be waiting in `tasks`: set by every queued signal (and at start), cleared by a claim that
   * found fewer than it asked for with no signal meanwhile. A slot that frees with nothing queued then claims
   * nothing: on PostgreSQL every claim holds all the free slots for a round trip (see claimPass), and an awaited
   * submission arriving meanwhile found none free, was committed pending and queued another claim. Under a steady
   * synchronous load that cascade sent a quarter of the runs through the queue: one more statement, commit and
   * wake-up each.
   */
  private pendingMaybe = true;
  /** Counts queued signals, so a claim can tell whether one arrived while it was in flight. */
  private queuedSignals = 0;
  /** When the last pass looked for expired leases and swept (see claimPass). */
  private lastRecovery = -Infinity;
  private readonly loop = new WakeableLoop({
    pass: () => this.claimPass(),
    intervalMs: () => this.pollMs,
    onError: (err) => this.d.log.error({ err }, 'task claim failed; retrying'),
  });

  constructor(private readonly d: TaskClaimerDeps) {}

  start(): void {
    // A (re)started worker looks for expired leases and pending tasks on its first pass.
    this.lastRecovery = -Infinity;
    this.pendingMaybe = true;
    this.inboxInterleaved = true;
    this.loop.start();
  }

  /** Ends the loop; the returned promise settles once its pass in flight has. */
  halt(): Promise<void> {
    return this.loop.halt();
  }

  /** A task was queued (`inbox`: into the task inbox; `interleaved`: after another organization's entry there). */
  taskQueued(inbox: boolean | undefined, interleaved?: boolean): void {
    if (inbox) this.inboxPending = true;
    if (interleaved) this.inboxInterleaved = true;
    this.pendingMaybe = true;
    this.queuedSignals++;
    // With every slot running (a slow model, a burst of accepts) a pass could do nothing; in the default deployment it
    // would run on the accept's own thread once per accepted call. The run that ends wakes the loop (SlotLedger.remove).
    if (!this.d.slots.allRunning()) this.loop.wake();
  }

  /** A slot freed: claim now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  /**
   * An organization came back under its bound of paused runs (SlotLedger.heldBack): its pending tasks, which the
   * claims skipped (and which may have cleared `pendingMaybe`), may be claimed now.
   */
  organizationReleased(): void {
    this.pendingMaybe = true;
    this.loop.wake();
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
  private async claimPass(): Promise<void> {
    const slots = this.d.slots;
    const recover = this.d.clock.now() - this.lastRecovery >= this.pollMs;
    if (recover) {
      this.lastRecovery = this.d.clock.now();
      await this.sweep();
    }
    // Every poll interval too: on SQLite another process's inbox entries come with no signal. Only with a free
    // slot: a worker whose slots are all busy (a slow model) would otherwise move the inbox a few entries at a
    // time on every accepted call, on the accept's own thread in the default deployment; a freed slot wakes
    // this loop (`wasFull` in SlotLedger.remove), and the pending flag makes that pass settle everything
    // accepted meanwhile at once.
    if ((this.inboxPending || recover) && slots.freeSlots() > 0) {
      if (this.inboxInterleaved) {
        // Everything, in transactions of 500 (TaskInbox.settle): cleared first, so that an entry interleaved after
        // this settle looked at the inbox sets it again.
        this.inboxInterleaved = false;
        this.inboxPending = false;
        await this.d.inbox.settle();
      } else {
        // Only what the free slots can start: the rest stays in the inbox (cheap) until a slot or a reader needs it.
        const free = slots.freeSlots();
        const moved = await this.d.inbox.settleOldest(free);
        this.inboxPending = moved === free;
      }
    }
    // Each poll looks anyway: another process's tasks come with no signal on SQLite, and a notification can be lost.
    if (!this.pendingMaybe && !recover) return;
    while (this.loop.active && slots.freeSlots() > 0) {
      const now = this.d.clock.now();
      const signalsBefore = this.queuedSignals;
      // Usually empty: the claim then runs its usual statement (task-claim.repository.ts).
      const heldBack = slots.heldBack();
      const kind = await this.d.queue.nextClaimable(now, recover, heldBack);
      if (kind === undefined) {
        if (this.queuedSignals === signalsBefore) this.pendingMaybe = false;
        break;
      }
      const free = slots.freeSlots();
      // Held while the claim is in flight, so an awaited submission (reserve) cannot take them meanwhile.
      const release = slots.hold(free);
      let rows: TaskRow[];
      try {
        rows =
          kind === 'expired'
            ? [await this.d.queue.claimExpired(this.d.owner, now, this.d.leaseMs)].filter((r): r is TaskRow => r !== undefined)
            : await this.d.queue.claimPendingBatch(this.d.owner, now, this.d.leaseMs, free, heldBack);
      } finally {
        release();
      }
      for (const row of rows) this.d.launch(row);
      // Fewer than asked: nothing more is due now (an expired lease is claimed one at a time, then look again).
      if (rows.length === 0 || (kind === 'pending' && rows.length < free)) {
        if (kind === 'pending' && this.queuedSignals === signalsBefore) this.pendingMaybe = false;
        break;
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
}
