import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on a TypeScript module of ours, from the sources as from `dist/`. A worker thread does not
 * inherit the parent's TypeScript loader (tsx, vitest) and ignores `--import` in its execArgv, so from the sources it
 * starts on a two-line bootstrap that registers our type-stripping hooks (ts-hooks.mjs) in the thread and then
 * imports the module; from `dist/` it starts on the built `.js` directly.
 *
 * `base`: the caller's `import.meta.url`; `module`: the sibling module without extension (`./schema-check.worker`).
 */
export function startTsWorker(base: string, module: string, options: WorkerOptions = {}): Worker {
  if (!base.endsWith('.ts')) return new Worker(new URL(`${module}.js`, base), options);
  const entry = new URL(`${module}.ts`, base).href;
  const hooks = new URL('./ts-hooks.mjs', import.meta.url).href;
  const bootstrap = `import('node:module').then(({ register }) => { register(${JSON.stringify(hooks)}); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
