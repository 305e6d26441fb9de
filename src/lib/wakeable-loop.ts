import { Waker } from './waker.js';

export interface WakeableLoopOptions {
  /** One pass of the loop's work; `active` tells a long pass when to stop early. */
  pass: () => Promise<void>;
  /** The sleep between passes, unless woken first (read before each sleep). */
  intervalMs: () => number;
  /** A pass that threw: the loop logs it and goes on at the next pass. */
  onError: (err: unknown) => void;
}

/**
 * A background loop that runs a pass, then sleeps until woken or until its interval ends: the task claimer, the
 * run supervisor and the notification dispatcher. A wake during a pass is remembered (Waker), so a signal that races
 * the pass runs another one at once.
 */
export class WakeableLoop {
  private readonly waker = new Waker();
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(private readonly o: WakeableLoopOptions) {}

  get active(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Ends the loop; the returned promise settles once the pass in flight has. */
  halt(): Promise<void> {
    this.running = false;
    this.waker.wake();
    return this.loop;
  }

  /** Runs a pass now rather than at the end of the interval. */
  wake(): void {
    this.waker.wake();
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.o.pass();
      } catch (err) {
        this.o.onError(err);
      }
      await this.waker.sleep(this.o.intervalMs());
    }
  }
}
