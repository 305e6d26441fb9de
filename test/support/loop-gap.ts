/**
 * Watches this process's event loop while `work` runs: the longest gap between 5 ms timer ticks. Work that runs on
 * this thread shows as a gap of its own length; work on another thread or process does not.
 */
export async function worstLoopGap<T>(work: () => Promise<T>): Promise<[result: T, worstGapMs: number, elapsedMs: number]> {
  let worst = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  try {
    const r = await work();
    return [r, worst, performance.now() - started];
  } finally {
    clearInterval(ticker);
  }
}
