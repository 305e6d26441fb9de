import { setBounded } from './bounded-map.js';

/**
 * A read-through cache that is exact: each entry remembers the data version it was read at, and is used only
 * while the version is unchanged (see Db.configVersion). Where no version is known (undefined), every get
 * reads through. Misses (undefined) are not cached, so unknown keys cannot fill it.
 */
export class VersionedCache<V> {
  private readonly entries = new Map<string, { version: string; value: V }>();

  constructor(
    private readonly version: () => string | undefined,
    private readonly max = 1000,
  ) {}

  /** The entry when it is known and current, without loading: for callers with a synchronous fast path. */
  peek(key: string): V | undefined {
    const version = this.version();
    if (version === undefined) return undefined;
    const hit = this.entries.get(key);
    return hit && hit.version === version ? hit.value : undefined;
  }

  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    // Read before loading: a change that lands during the load leaves an entry the next get will not trust.
    const version = this.version();
    if (version === undefined) return load();
    const hit = this.entries.get(key);
    if (hit && hit.version === version) return hit.value;
    const value = await load();
    if (value === undefined) {
      this.entries.delete(key);
      return undefined;
    }
    setBounded(this.entries, key, { version, value }, this.max);
    return value;
  }
}
