/**
 * Sets `key` in a map used as a bounded cache: when a new key would exceed `max` entries, the oldest entry
 * (first inserted) goes first. Replacing an existing key evicts nothing.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (!map.has(key) && map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}
