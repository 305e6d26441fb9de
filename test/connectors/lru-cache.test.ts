import { describe, expect, it } from 'vitest';
import { LruCache } from '../../src/connectors/lru-cache.js';

describe('LruCache', () => {
  it('evicts the least recently used entries beyond the weight budget, keeping at least one', () => {
    const c = new LruCache<string, number>(10, (v) => v);
    c.set('a', 4);
    c.set('b', 4);
    expect(c.get('a')).toBe(4); // a is now the most recent
    c.set('c', 4); // 12 > 10: b goes
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe(4);
    expect(c.get('c')).toBe(4);
    c.set('huge', 50); // heavier than the budget: kept alone
    expect(c.size).toBe(1);
    expect(c.get('huge')).toBe(50);
    c.set('x:1', 1);
    c.set('x:2', 1);
    c.deleteWhere((k) => k.startsWith('x:'));
    expect(c.get('x:1')).toBeUndefined();
    expect(c.size).toBe(0);
  });
});
