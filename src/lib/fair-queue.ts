/**
 * Jobs waiting for a shared worker (a sandbox thread, an extraction process), one FIFO queue per organization. A
 * free worker takes the oldest job of the organization served least recently (an organization never served comes
 * first), skipping organizations that already hold their share of workers. So an organization's oldest waiting job
 * has at most one job of every other organization with waiting work started ahead of it, however many jobs those
 * organizations have queued.
 */
export class FairQueue<T> {
  private readonly queues = new Map<string, T[]>();
  private readonly lastServed = new Map<string, number>();
  private turn = 0;
  private total = 0;

  get size(): number {
    return this.total;
  }

  sizeOf(key: string): number {
    return this.queues.get(key)?.length ?? 0;
  }

  push(key: string, item: T): void {
    const q = this.queues.get(key);
    if (q) q.push(item);
    else this.queues.set(key, [item]);
    this.total++;
  }

  /** Removes a waiting item (a cancelled call); false when it already left the queue. */
  remove(key: string, item: T): boolean {
    const q = this.queues.get(key);
    const i = q ? q.indexOf(item) : -1;
    if (!q || i < 0) return false;
    q.splice(i, 1);
    this.total--;
    if (!q.length) this.queues.delete(key);
    return true;
  }

  /** The next item by the rule above among the keys `eligible` accepts, or undefined. */
  shift(eligible: (key: string) => boolean): T | undefined {
    let best: string | undefined;
    let bestTurn = Infinity;
    for (const key of this.queues.keys()) {
      const served = this.lastServed.get(key) ?? -1;
      if (served < bestTurn && eligible(key)) {
        best = key;
        bestTurn = served;
      }
    }
    if (best === undefined) return undefined;
    const q = this.queues.get(best)!;
    const item = q.shift()!;
    this.total--;
    if (!q.length) this.queues.delete(best);
    this.lastServed.set(best, this.turn++);
    if (this.lastServed.size > 2 * this.queues.size + 64) this.forgetIdle();
    return item;
  }

  /**
   * Drops the turns of idle organizations served before every waiting one: such an organization would come first
   * on its return either way (its turn is older than all waiting ones), so forgetting it changes no order.
   */
  private forgetIdle(): void {
    let oldestWaiting = Infinity;
    for (const key of this.queues.keys()) oldestWaiting = Math.min(oldestWaiting, this.lastServed.get(key) ?? -1);
    for (const [key, served] of this.lastServed) {
      if (served < oldestWaiting && !this.queues.has(key)) this.lastServed.delete(key);
    }
  }

  drain(): T[] {
    const all = [...this.queues.values()].flat();
    this.queues.clear();
    this.total = 0;
    return all;
  }
}
