import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getEventListeners } from 'node:events';
import { deadlineSignal, raceAbort } from '../../src/lib/abort.js';

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

/** deadlineSignal (src/lib/abort.ts): AbortSignal.any([parent, AbortSignal.timeout(ms)]) without its cost, released. */
describe('deadlineSignal', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('aborts with a TimeoutError once its time is up, as AbortSignal.timeout does', async () => {
    const d = deadlineSignal(undefined, 30);
    expect(d.signal.aborted).toBe(false);
    await sleep(80);
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it("aborts with the parent's reason when the parent aborts first, and at once when it already had", () => {
    const parent = new AbortController();
    const d = deadlineSignal(parent.signal, 60_000);
    parent.abort(new Error('stopping'));
    expect(d.signal.reason).toEqual(new Error('stopping'));
    d.release();
    expect(deadlineSignal(parent.signal, 60_000).signal.reason).toEqual(new Error('stopping'));
  });

  it('once released, leaves no listener on the parent and no timer that could still abort it', async () => {
    const parent = new AbortController();
    const d = deadlineSignal(parent.signal, 30);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    d.release();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    await sleep(80);
    parent.abort(new Error('late'));
    expect(d.signal.aborted).toBe(false);
  });
});
