/**
 * A small LRU with an optional weight per entry (parsed documents are weighed by their source size, so a few
 * 10 MB documents cannot crowd the heap while hundreds of small ones still fit).
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, { value: V; weight: number }>();
  private total = 0;

  constructor(
    private readonly maxWeight: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  get(key: K): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = Math.max(1, this.weigh(value));
    this.map.set(key, { value, weight });
    this.total += weight;
    for (const [k, v] of this.map) {
      if (this.total <= this.maxWeight || this.map.size <= 1) break;
      this.map.delete(k);
      this.total -= v.weight;
    }
  }

  delete(key: K): void {
    const hit = this.map.get(key);
    if (!hit) return;
    this.map.delete(key);
    this.total -= hit.weight;
  }

  /** Drops every entry whose key matches (e.g. all schemas of a deleted connector). */
  deleteWhere(match: (key: K) => boolean): void {
    for (const k of [...this.map.keys()]) if (match(k)) this.delete(k);
  }

  get size(): number {
    return this.map.size;
  }
}
