/** The first error in `e`'s `cause` chain (itself included, six deep at most) that `pred` accepts. */
export function findCause(e: unknown, pred: (c: unknown) => boolean): unknown {
  let cur: unknown = e;
  for (let i = 0; i < 6 && cur; i++) {
    if (pred(cur)) return cur;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}
