import { MAX_CALL_DEPTH } from './call-depth.js';
import type { Execution } from './task-execution.js';

/**
 * The worker's slots (task.worker.ts): the runs it holds, the slots held for tasks being claimed or committed, and
 * the slots lent by runs waiting on a child task or a decision, and the organizations held back for their paused
 * runs. The claimer (task-claimer.ts) claims only what is free here, and no held-back organization's new tasks; the
 * run supervisor (run-supervisor.ts) checks the runs held here.
 */

export interface SlotLedgerDeps {
  concurrency: number;
  /** Runs paused for a person's approval that lend their slot at once (AGENTRY_MAX_PAUSED_RUNS); past it they hold it. */
  maxPausedRuns: number;
  /**
   * Runs of one organization paused for approval here past which its pending tasks are not claimed here
   * (AGENTRY_MAX_PAUSED_RUNS_PER_ORG; 0: no such bound). See heldBack.
   */
  maxPausedRunsPerOrg: number;
  /** A slot became free that the claimer may have stopped claiming for want of: wake it. */
  slotFreed: () => void;
  /** An organization came back under maxPausedRunsPerOrg: its pending tasks may be claimed again. */
  organizationReleased: () => void;
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
  /** Runs paused for an approval here, by organization, whether they lend their slot or hold it. */
  private readonly pausedByOrg = new Map<string, number>();
  /** The organizations with maxPausedRunsPerOrg paused runs here, as heldBack answers them (rebuilt on change only). */
  private held: readonly string[] = [];

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

  /**
   * The organizations whose pending tasks this worker does not claim now: each has maxPausedRunsPerOrg runs paused
   * for approval here. Without this bound one organization's supervised tasks that nobody decides fill the paused
   * runs' loans (maxPausedRuns), then every slot, and every other organization's tasks wait as long as the decisions
   * do (days). Usually empty: the claim then runs its usual statement.
   */
  heldBack(): readonly string[] {
    return this.held;
  }

  /** A new task of this organization should not start here now (see heldBack); a child task of a run always may. */
  holdsBack(organizationId: string): boolean {
    return this.held.length > 0 && this.held.includes(organizationId);
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
   * Paused runs are also counted by organization (heldBack), whether they lend their slot or hold it.
   */
  async parkForApproval<T>(organizationId: string, waiting: Promise<T>): Promise<T> {
    this.countPaused(organizationId, 1);
    try {
      return await this.lend('lentByPaused', this.d.maxPausedRuns, waiting);
    } finally {
      this.countPaused(organizationId, -1);
    }
  }

  /** One more (or one less) of the organization's runs paused here; updates heldBack when it crosses the bound. */
  private countPaused(organizationId: string, by: 1 | -1): void {
    const n = (this.pausedByOrg.get(organizationId) ?? 0) + by;
    if (n > 0) this.pausedByOrg.set(organizationId, n);
    else this.pausedByOrg.delete(organizationId);
    const bound = this.d.maxPausedRunsPerOrg;
    if (bound <= 0) return;
    if (by === 1 && n === bound) this.held = [...this.held, organizationId];
    else if (by === -1 && n === bound - 1) {
      this.held = this.held.filter((o) => o !== organizationId);
      this.d.organizationReleased();
    }
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

  /** Runs paused for approval whose slot is lent now (for tests). */
  get pausedLending(): number {
    return this.lentByPaused;
  }
}

/** Task ids are chosen by callers (task-ids.ts), so they are unique only within their organization. */
export function executionKey(organizationId: string, taskId: string): string {
  return `${organizationId}\u0000${taskId}`;
}
