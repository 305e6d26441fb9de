import { describe, expect, it } from 'vitest';
import { loadOnce } from '../../src/lib/load-once.js';

/** The lazily loaded SDKs (MCP client and server side, A2A) load once, and recover from a failed load. */
describe('loadOnce', () => {
  it('shares one load between concurrent first uses and keeps its value', async () => {
    let loads = 0;
    const lazy = loadOnce(async () => ({ n: ++loads }));
    expect(lazy.loaded()).toBeUndefined();
    const [a, b] = await Promise.all([lazy.get(), lazy.get()]);
    expect(a).toBe(b);
    expect(await lazy.get()).toBe(a);
    expect(lazy.loaded()).toBe(a);
    expect(loads).toBe(1);
  });

  it('tries again after a failed load instead of failing for the life of the process', async () => {
    let loads = 0;
    const lazy = loadOnce(async () => {
      if (++loads === 1) throw new Error('EMFILE: too many open files');
      return 'module';
    });
    await expect(lazy.get()).rejects.toThrow('EMFILE');
    expect(lazy.loaded()).toBeUndefined();
    expect(await lazy.get()).toBe('module');
    expect(loads).toBe(2);
  });
});
