/**
 * `p`, or the signal's reason as soon as it aborts (already aborted: at once). `p` itself is not cancelled: the caller
 * stops whatever it stands for (a child task, a step, a delivery) when this rejects. `p` is always followed, also when
 * the signal had already aborted: it usually rejects with that same reason later, and left alone that rejection
 * would be unhandled (it was, when a notification dispatcher stopped while claiming).
 */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
