/**
 * Runs custom-function code inside QuickJS (WebAssembly) on a worker thread.
 *
 * Plain JavaScript on purpose: a worker thread does not inherit the TypeScript loader of its parent under every
 * runner (tsx, vitest), and this file must start the same way everywhere.
 *
 * Isolation: the code sees only the ECMAScript built-ins of a fresh QuickJS context plus a capturing `console`.
 * There is no `require`, `process`, `fetch`, file system or network; values cross the boundary only as JSON text.
 * Limits: QuickJS's allocator refuses allocations beyond `memoryBytes`; the interrupt handler aborts execution after
 * `timeoutMs`. The parent additionally terminates this thread when a job overruns its deadline by a grace period.
 */
import { parentPort } from 'node:worker_threads';
import { newQuickJSWASMModule } from 'quickjs-emscripten';

const MAX_LOG_LINES = 100;
const MAX_LOG_CHARS = 2000;
const MAX_RESULT_CHARS = 1_000_000;
const STACK_BYTES = 256 * 1024;

let quickjs = await newQuickJSWASMModule();
let baseHeapBytes = heapBytes();

/**
 * QuickJS's own allocation limit does not see every growth in this WebAssembly build (large array storage escapes
 * it), so the interrupt handler also watches the module's linear memory. WebAssembly memory never shrinks: a module
 * that grew past the budget is replaced after the job so one greedy function cannot keep the memory.
 */
function heapBytes() {
  return quickjs.module.HEAPU8.length;
}

async function renewModule() {
  quickjs = await newQuickJSWASMModule();
  baseHeapBytes = heapBytes();
}

parentPort.on('message', (job) => {
  let reply;
  try {
    reply = runJob(job);
  } catch (e) {
    // The WebAssembly module itself failed (it should not): start from a fresh module for the next job.
    reply = { ok: false, kind: 'internal', error: `Sandbox failure: ${e instanceof Error ? e.message : String(e)}`, logs: [] };
    quickjs = undefined;
  }
  if (quickjs && heapBytes() > baseHeapBytes + job.memoryBytes) quickjs = undefined;
  if (!quickjs) {
    // Jobs arrive one at a time (the pool waits for this reply), so the fresh module is in place for the next one.
    renewModule().then(
      () => parentPort.postMessage({ id: job.id, ...reply }),
      // Without a module this thread is useless: exit, and the pool answers the job and starts a new thread.
      () => process.exit(1),
    );
  } else {
    parentPort.postMessage({ id: job.id, ...reply });
  }
});

function runJob(job) {
  const started = Date.now();
  const deadline = started + job.timeoutMs;
  const logs = [];
  const limits = { deadline, memoryExceeded: false };
  const heapCeiling = baseHeapBytes + job.memoryBytes;
  const rt = quickjs.newRuntime();
  rt.setMemoryLimit(job.memoryBytes);
  rt.setMaxStackSize(STACK_BYTES);
  rt.setInterruptHandler(() => {
    if (heapBytes() > heapCeiling) limits.memoryExceeded = true;
    return limits.memoryExceeded || Date.now() > deadline;
  });
  const ctx = rt.newContext();
  try {
    installConsole(ctx, logs);
    const loaded = ctx.evalCode(job.code, 'function.js', { type: 'global' });
    if (loaded.error) return failure(ctx, loaded.error, logs, limits, 'syntax');
    loaded.value.dispose();

    const kind = ctx.evalCode('typeof run');
    if (kind.error) return failure(ctx, kind.error, logs, limits, 'runtime');
    const type = ctx.getString(kind.value);
    kind.value.dispose();
    if (type !== 'function') {
      return { ok: false, kind: 'invalid', error: 'The code must define `async function run(args)`', logs };
    }
    if (job.op === 'analyse') return { ok: true, logs };

    // The arguments enter as a JSON string literal; the result leaves as JSON text: no handle crosses the boundary.
    const call = ctx.evalCode(
      `(async () => { const r = await run(JSON.parse(${JSON.stringify(job.argsJson)})); ` +
        `return r === undefined ? 'null' : JSON.stringify(r); })()`,
    );
    if (call.error) return failure(ctx, call.error, logs, limits, 'runtime');
    const promise = call.value;
    try {
      for (;;) {
        const jobs = rt.executePendingJobs();
        if (jobs.error) return failure(ctx, jobs.error, logs, limits, 'runtime');
        const done = jobs.value === 0;
        const state = ctx.getPromiseState(promise);
        if (state.type === 'fulfilled') {
          const text = ctx.typeof(state.value) === 'string' ? ctx.getString(state.value) : 'null';
          state.value.dispose();
          if (text.length > MAX_RESULT_CHARS) {
            return { ok: false, kind: 'limit', error: `The result is larger than ${MAX_RESULT_CHARS} characters`, logs };
          }
          return { ok: true, resultJson: text, logs };
        }
        if (state.type === 'rejected') return failure(ctx, state.error, logs, limits, 'runtime');
        if (done) {
          return { ok: false, kind: 'runtime', error: 'run(args) never settled: it awaits something that cannot resolve here', logs };
        }
      }
    } finally {
      promise.dispose();
    }
  } finally {
    ctx.dispose();
    rt.dispose();
  }
}

function failure(ctx, handle, logs, limits, fallbackKind) {
  const err = ctx.dump(handle);
  handle.dispose();
  const message = typeof err === 'object' && err !== null ? `${err.name ?? 'Error'}: ${err.message ?? ''}` : String(err);
  const interrupted = /interrupted/i.test(message);
  if (interrupted && !limits.memoryExceeded && Date.now() > limits.deadline) {
    return { ok: false, kind: 'timeout', error: 'The function ran past its time limit and was stopped', logs };
  }
  if ((interrupted && limits.memoryExceeded) || /out of memory/i.test(message) || err === null) {
    return { ok: false, kind: 'memory', error: 'The function exceeded its memory limit and was stopped', logs };
  }
  if (/stack overflow/i.test(message)) {
    return { ok: false, kind: 'memory', error: 'The function exceeded its stack limit (too deep recursion) and was stopped', logs };
  }
  const line = typeof err === 'object' && err?.stack ? `\n${String(err.stack).split('\n').slice(0, 5).join('\n')}` : '';
  return { ok: false, kind: fallbackKind, error: (message + line).slice(0, 4000), logs };
}

function installConsole(ctx, logs) {
  const consoleObj = ctx.newObject();
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const fn = ctx.newFunction(level, (...args) => {
      if (logs.length >= MAX_LOG_LINES) return;
      const parts = args.map((a) => {
        const v = ctx.dump(a);
        return typeof v === 'string' ? v : safeJson(v);
      });
      logs.push(`[${level}] ${parts.join(' ')}`.slice(0, MAX_LOG_CHARS));
    });
    ctx.setProp(consoleObj, level, fn);
    fn.dispose();
  }
  ctx.setProp(ctx.global, 'console', consoleObj);
  consoleObj.dispose();
}

function safeJson(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}
