import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';

/**
 * The usual pace: a sweep waits three times as long as each batch took, so it takes at most a quarter of the
 * database's time. Unpaced, the task retention sweep's writes outran the WAL checkpoints and the kernel's writeback
 * and single batches stalled for 0.5-0.8 s; paced, the longest batch of 100,000 tasks deleted was 47 ms.
 */
export const SWEEP_PACE = 3;

export interface PacedScheduleOptions {
  /** One run of the job; it reads `halted` between batches. */
  run: () => Promise<unknown>;
  /** A run that threw: logged, and the next run is scheduled as usual. */
  onError: (err: unknown) => void;
  firstDelayMs: number;
  /** Between the end of a run and the start of the next. */
  intervalMs: number;
  /** `pause` waits this many times as long as the batch before it took. */
  pace: number;
}

/**
 * When a background sweep of the worker role runs, and how it yields: first `firstDelayMs` after start (starting goes
 * first), then `intervalMs` after each run ends. Within a run, `pause(took)` after each batch of database work waits
 * `pace` times as long as the batch took, so the sweep takes at most 1/(1 + pace) of the database's time and requests
 * and other writers are served between its batches (docs/decisions.md#tasks-retention, "Batches, paced"); `pages`
 reads the organizations' ranges a page at a time. `stop`
 * sets `halted` (a run ends after its batch in flight, a pause at once) and waits for the run in flight. Used by the
 * task retention sweep and the file sweep.
 */
export class PacedSchedule {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private started = false;
  private halt = new AbortController();

  constructor(private readonly o: PacedScheduleOptions) {}

  /** True once stopped: a run in progress ends after its batch in flight. */
  get halted(): boolean {
    return this.halt.signal.aborted;
  }

  /** Schedules the first run; false when already started. */
  start(): boolean {
    if (this.started) return false;
    this.started = true;
    this.halt = new AbortController();
    this.schedule(this.o.firstDelayMs);
    return true;
  }

  async stop(): Promise<void> {
    this.started = false;
    this.halt.abort();
    clearTimeout(this.timer);
    await this.running;
  }

  /** The pause after a batch that took `tookMs`; cut short by `stop`. */
  pause(tookMs: number): Promise<void> {
    return sleep(tookMs * this.o.pace, undefined, { signal: this.halt.signal }).catch(() => {});
  }

  /**
   * Each page of each organization's range, until stopped: organizations in the order `organizationAfter` gives, and
   * in each, pages of at most `size` keys, each read after the last key of the page before. The event loop turns
   * after every read (libsql's are synchronous), and the caller's work on a page (its pause included) is done before
   * the next is read.
   */
  async *pages<K>(
    organizationAfter: (after: string | undefined) => Promise<string | undefined>,
    read: (org: string, after: K | undefined, size: number) => Promise<K[]>,
    size: number,
  ): AsyncGenerator<{ org: string; page: K[] }> {
    for (let org = await organizationAfter(undefined); org !== undefined && !this.halted; org = await organizationAfter(org)) {
      for (let after: K | undefined; !this.halted; ) {
        const page = await read(org, after, size);
        await nextTurn();
        if (page.length === 0 || this.halted) break;
        yield { org, page };
        if (page.length < size) break;
        after = page[page.length - 1];
      }
    }
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.running = this.o
        .run()
        .catch(this.o.onError)
        .finally(() => {
          this.running = undefined;
          if (this.started) this.schedule(this.o.intervalMs);
        });
    }, delay);
  }
}
