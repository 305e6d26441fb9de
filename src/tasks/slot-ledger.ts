import { MAX_CALL_DEPTH } from './call-depth.js';
import type { Execution } from './task-execution.js';

/**
 * The worker's slots (task.worker.ts): the runs it holds, the slots held for tasks being claimed or committed, and
 * the slots lent by runs waiting on a child task. The claimer (task-claimer.ts) claims only what is free here; the
 * run supervisor (run-supervisor.ts) checks the runs held here.
 */

export interface SlotLedgerDeps {
  concurrency: number;
  /** Runs paused for a person's approval that lend their slot at once (AGENTRY_MAX_PAUSED_RUNS); past it they hold it. */
  maxPausedRuns: number;
  /** A slot became free that the claimer may have stopped claiming for want of: wake it. */
  slotFreed: () => void;
}

/** A waiting parent lends its slot (parkWhile); this many per configured slot at most: a chain of MAX_CALL_DEPTH. */
const MAX_LENT_SLOTS_PER_SLOT = MAX_CALL_DEPTH;

export class SlotLedger {
  private readonly running = new Map<string, Execution>();
  /** Slots held for awaited submissions being committed (see TaskWorker.reserve) and for tasks being claimed. */
  private reserved = 0;
  /** Slots lent by runs waiting on a child task (parkWhile); bounded by MAX_LENT_SLOTS_PER_SLOT x concurrency. */
  private lentToChildren = 0;
  /** Slots lent by runs paused for an approval (parkForApproval); bounded by maxPausedRuns. */
  private lentByPaused = 0;

  private get lent(): number {
    return this.lentToChildren + this.lentByPaused;
  }

  constructor(private readonly d: SlotLedgerDeps) {}

  /** Slots neither running a task nor held for one being claimed or committed; a waiting parent's slot is lent. */
  freeSlots(): number {
    return this.d.concurrency + this.lent - this.running.size - this.reserved;
  }

  /**
   * Every slot runs a task: nothing can be claimed until one ends, and the run that ends wakes the claimer
   * (`remove`). Slots merely held (a claim or an awaited commit in flight) are not counted: they free by themselves.
   */
  allRunning(): boolean {
    return this.running.size >= this.d.concurrency + this.lent;
  }

  /** Holds `n` slots; the returned function frees them (once, however often it is called). */
  hold(n: number): () => void {
    this.reserved += n;
    let held = true;
    return () => {
      if (held) this.reserved -= n;
      held = false;
    };
  }

  /** The run takes a slot until `remove`. */
  add(e: Execution): void {
    this.running.set(executionKey(e.lease.organizationId, e.lease.taskId), e);
  }

  /** The run ended: its slot frees. */
  remove(e: Execution): void {
    const k = executionKey(e.lease.organizationId, e.lease.taskId);
    // A freed slot matters to the claim loop only if it had stopped claiming for want of one.
    const wasFull = this.allRunning();
    if (this.running.get(k) === e) this.running.delete(k);
    if (wasFull) this.d.slotFreed();
  }

  get(organizationId: string, taskId: string): Execution | undefined {
    return this.running.get(executionKey(organizationId, taskId));
  }

  /** The runs held now (a copy: one added or removed meanwhile does not change it). */
  executions(): Execution[] {
    return [...this.running.values()];
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** A run that has not begun recording its outcome (record publishes it, with the row). */
  runningHere(organizationId: string, taskId: string): boolean {
    const e = this.get(organizationId, taskId);
    return !!e && !e.settling && !e.abort.signal.aborted;
  }

  /**
   * A run waiting for a child task lends its slot: otherwise parents waiting on children fill every slot and the
   * children, queued behind them, are never claimed (a chain of sub-agents as deep as the concurrency stalls until
   * the sub-agent timeout). Lending is bounded, so waiting runs cannot grow the in-flight runs without limit: past
   * the bound a parent waits holding its slot, as before.
   */
  async parkWhile<T>(waiting: Promise<T>): Promise<T> {
    return this.lend('lentToChildren', this.d.concurrency * MAX_LENT_SLOTS_PER_SLOT, waiting);
  }

  /**
   * A run paused for a person's approval lends its slot: a decision may take days, and as many supervised tasks
   * waiting as there are slots would otherwise stop every other task of every organization. The paused run stays in
   * memory (its conversation, its heartbeat), so these loans have their own bound; past it a paused run holds its
   * slot. A run resumed by the decision runs over the concurrency until it ends, as a parent back from its child does.
   */
  async parkForApproval<T>(waiting: Promise<T>): Promise<T> {
    return this.lend('lentByPaused', this.d.maxPausedRuns, waiting);
  }

  /** Lends the waiting run's slot until `waiting` settles, while fewer than `bound` loans of that kind are out. */
  private async lend<T>(kind: 'lentToChildren' | 'lentByPaused', bound: number, waiting: Promise<T>): Promise<T> {
    if (this[kind] >= bound) return waiting;
    this[kind]++;
    this.d.slotFreed();
    try {
      return await waiting;
    } finally {
      this[kind]--;
    }
  }

  /** Runs paused for approval whose slot is lent now (for /metrics and tests). */
  get pausedLending(): number {
    return this.lentByPaused;
  }
}

/** Task ids are chosen by callers (task-ids.ts), so they are unique only within their organization. */
export function executionKey(organizationId: string, taskId: string): string {
  return `${organizationId}\u0000${taskId}`;
}
