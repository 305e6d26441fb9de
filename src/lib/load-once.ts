/**
 * A value loaded on first use and kept (a module loaded with `import()`, and what is built from it): concurrent
 * first uses share one load. A failed load is forgotten, so the next use tries again instead of failing for the life
 * of the process (a module that cannot be read while the process is short of file descriptors, say).
 */
export function loadOnce<T>(load: () => Promise<T>): { get(): Promise<T>; loaded(): T | undefined } {
  let pending: Promise<T> | undefined;
  let value: T | undefined;
  return {
    get: () =>
      (pending ??= load().then(
        (v) => (value = v),
        (e: unknown) => {
          pending = undefined;
          throw e;
        },
      )),
    loaded: () => value,
  };
}
