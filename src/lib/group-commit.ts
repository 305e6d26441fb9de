/**
 * Group commit: items added while a write is being prepared or committed are written together, in one
 * transaction, by the next flush. A commit costs about the same for one row as for fifty (the WAL append on
 * SQLite, the fsync on PostgreSQL), so under load each caller pays a share of one commit instead of a whole one.
 *
 * - `add` resolves only once the item's own batch is committed (durability is never traded for speed);
 * - one flush runs at a time; a flush starts on the next turn of the event loop, so every request parsed in
 *   the same turn joins it, and on PostgreSQL everything that arrives during a flush's round trips joins the next;
 * - when a batch fails, its items are retried one by one, so one bad item fails only its own caller.
 */
export class GroupCommit<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;
  private scheduled = false;

  /**
   * @param write commits the items in one transaction and returns one result per item, in order
   * @param maxBatch items per transaction (bounded by the statement's parameter limit and latency)
   */
  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.flushing && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    this.scheduled = false;
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const out = await this.write(batch.map((b) => b.item));
          batch.forEach((b, i) => b.resolve(out[i]!));
        } catch (e) {
          if (batch.length === 1) batch[0]!.reject(e);
          else await this.oneByOne(batch);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private async oneByOne(batch: typeof this.queue): Promise<void> {
    for (const b of batch) {
      try {
        b.resolve((await this.write([b.item]))[0]!);
      } catch (e) {
        b.reject(e);
      }
    }
  }
}
