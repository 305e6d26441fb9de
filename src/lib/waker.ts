/**
 * A resettable wake-up for loops that sleep until a signal or a poll interval, whichever comes first.
 * `wake()` before `sleep()` is remembered, so a signal that races the loop is never lost.
 */
export class Waker {
  private pending = false;
  private resolve?: () => void;
  private timer?: NodeJS.Timeout;

  wake(): void {
    if (this.resolve) {
      const r = this.resolve;
      this.resolve = undefined;
      clearTimeout(this.timer);
      r();
    } else this.pending = true;
  }

  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.timer = setTimeout(() => {
        this.resolve = undefined;
        resolve();
      }, ms);
    });
  }
}
