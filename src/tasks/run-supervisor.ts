import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { WakeableLoop } from '../lib/wakeable-loop.js';
import { pastDeadline } from './run-deadline.js';
import { executionKey, type SlotLedger } from './slot-ledger.js';
import { abortExecution } from './task-execution.js';
import type { TaskQueueRepository } from './task-queue.repository.js';

export interface RunSupervisorDeps {
  queue: TaskQueueRepository;
  clock: Clock;
  log: Logger;
  leaseMs: number;
  /** The worker's lease owner: the tasks it holds are read by it. */
  owner: string;
  slots: SlotLedger;
  /** AGENTRY_APPROVAL_TIMEOUT_MS: a run waiting longer for a person's decision is stopped (0: it waits). */
  approvalTimeoutMs?: number;
}

/** How often a busy worker checks its tasks for stop requests and approval decisions (stop must land within 1 s). */
const CONTROL_MS = 250;

/**
 * Heartbeats, stop detection, deadlines and approval decisions for the tasks this worker holds (the runs in
 * `slots`): a run whose task was stopped or taken over, or that worked past its deadline (run-deadline.ts), is
 * aborted; a decided approval is handed to the run that waits for it.
 */
export class RunSupervisor {
  private readonly loop = new WakeableLoop({
    // Only while runs are held here; a stop or decision for one of them wakes the loop at once (statusChanged).
    pass: async () => {
      if (this.d.slots.runningCount > 0) await this.control();
    },
    intervalMs: () => CONTROL_MS,
    onError: (err) => this.d.log.warn({ err }, 'task control check failed'),
  });

  constructor(private readonly d: RunSupervisorDeps) {}

  start(): void {
    this.loop.start();
  }

  /** Ends the loop; the returned promise settles once its check in flight has. */
  halt(): Promise<void> {
    return this.loop.halt();
  }

  /** A task's status changed: check it now if it runs here and is not settling (see TaskWorker.start). */
  statusChanged(organizationId: string, taskId: string): void {
    if (this.d.slots.get(organizationId, taskId)?.settling === false) this.loop.wake();
  }

  private async control(): Promise<void> {
    // Only executions whose task was committed before the read: one launched meanwhile, or one whose submission's
    // commit (LocalSlots) returns while the read is in flight, may be missing from its answer. Taking the latter for
    // lost aborted healthy runs under load on PostgreSQL and left their tasks to wait out the lease (30 s).
    const checked = this.d.slots.executions().filter((e) => !e.unrecorded);
    // Deadlines first: they need no read, and a slow database must not let runs overstay.
    const started = this.d.clock.now();
    for (const e of checked) if (!e.abort.signal.aborted && !e.settling && pastDeadline(e.work, started)) abortExecution(e, 'timeout', this.d.log);
    const approvalMs = this.d.approvalTimeoutMs ?? 0;
    if (approvalMs > 0) {
      for (const e of checked) if (e.approval && e.approvalAskedAt !== undefined && started - e.approvalAskedAt >= approvalMs) abortExecution(e, 'approval-expired', this.d.log);
    }
    const owned = new Map((await this.d.queue.owned(this.d.owner)).map((r) => [executionKey(r.organization_id, r.id), r]));
    const now = this.d.clock.now();
    for (const e of checked) {
      if (e.abort.signal.aborted || e.settling) continue;
      const row = owned.get(executionKey(e.lease.organizationId, e.lease.taskId));
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
}
