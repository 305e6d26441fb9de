import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/lib/group-commit.js';

/** The accept path's durability rests on these: each caller is answered with its own item's result, after its batch. */
describe('GroupCommit', () => {
  it('writes the items added in one event-loop turn together, and answers each with its own result', async () => {
    const batches: number[][] = [];
    const gc = new GroupCommit<number, string>(async (items) => {
      batches.push([...items]);
      return items.map((i) => `r${i}`);
    }, 100);
    const out = await Promise.all([1, 2, 3].map((i) => gc.add(i)));
    expect(out).toEqual(['r1', 'r2', 'r3']);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('collects what arrives during a write into the next batch, within the batch size', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const gc = new GroupCommit<number, number>(async (items) => {
      batches.push([...items]);
      if (batches.length === 1) await gate;
      return items;
    }, 2);
    const first = gc.add(0);
    await new Promise((r) => setImmediate(r));
    const later = [1, 2, 3].map((i) => gc.add(i));
    release();
    expect(await Promise.all([first, ...later])).toEqual([0, 1, 2, 3]);
    expect(batches).toEqual([[0], [1, 2], [3]]);
  });

  it('when a batch fails, retries its items one by one so only the bad one fails', async () => {
    const calls: number[][] = [];
    const gc = new GroupCommit<number, number>(async (items) => {
      calls.push([...items]);
      if (items.includes(2)) throw new Error('bad item');
      return items.map((i) => i * 10);
    }, 100);
    const results = await Promise.allSettled([1, 2, 3].map((i) => gc.add(i)));
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([10, 'bad item', 30]);
    expect(calls).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('keeps working after a failed batch', async () => {
    let fail = true;
    const gc = new GroupCommit<number, number>(async (items) => {
      if (fail) throw new Error('database down');
      return items;
    }, 100);
    await expect(gc.add(1)).rejects.toThrow('database down');
    fail = false;
    expect(await gc.add(2)).toBe(2);
  });
});
