import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { raceAbort } from '../../src/lib/abort.js';

/** raceAbort (src/lib/abort.ts): the promise, or the signal's reason, and never an unhandled rejection of either. */
describe('raceAbort', () => {
  const unhandled: unknown[] = [];
  const record = (e: unknown) => unhandled.push(e);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
  });
  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('gives the promise its way while the signal stands, and leaves no listener behind', async () => {
    const c = new AbortController();
    let listeners = 0;
    const signal = c.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...a: Parameters<typeof add>) => (listeners++, add(...a))) as typeof add;
    signal.removeEventListener = ((...a: Parameters<typeof remove>) => (listeners--, remove(...a))) as typeof remove;
    expect(await raceAbort(Promise.resolve(7), signal)).toBe(7);
    await expect(raceAbort(Promise.reject(new Error('own')), signal)).rejects.toThrow('own');
    await settle();
    expect(listeners).toBe(0);
  });

  it('rejects with the reason when the signal aborts first', async () => {
    const c = new AbortController();
    const racing = raceAbort(new Promise(() => {}), c.signal);
    c.abort(new Error('stopping'));
    await expect(racing).rejects.toThrow('stopping');
  });

  it('rejects at once on a signal already aborted, and the promise rejecting later is not left unhandled', async () => {
    const c = new AbortController();
    c.abort(new Error('stopping'));
    let fail!: (e: unknown) => void;
    const late = new Promise((_, reject) => (fail = reject));
    await expect(raceAbort(late, c.signal)).rejects.toThrow('stopping');
    fail(c.signal.reason);
    await settle();
    expect(unhandled).toEqual([]);
  });
});
