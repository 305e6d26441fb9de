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
const MAX_RESULT_DEPTH = 200;
const STACK_BYTES = 256 * 1024;

/**
 * Evaluated in every fresh context before the tenant's code. It captures the intrinsics the call relies on (JSON,
 * String) in a closure, so code that replaces `JSON.stringify` or pollutes prototypes cannot change what the wrapper
 * does; the host's log function is reachable only through that closure, and receives strings of bounded length.
 * The wrapper resolves to a string only (an array or object result could be made a thenable through
 * Object.prototype.then); text longer than the limit comes back as RESULT_TOO_LARGE, which is not JSON (and has no NUL: QuickJS strings reach the host as C strings).
 */
const RESULT_TOO_LARGE = '!too-large';
const PRELUDE = `(function (hostLog, maxResultChars, maxLogChars) {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify, toText = String;
  const slice = Function.prototype.call.bind(String.prototype.slice);
  const show = (v) => {
    if (typeof v === 'string') return v;
    try { const t = stringify(v); if (typeof t === 'string') return t; } catch (e) {}
    try { return toText(v); } catch (e) { return '[unprintable value]'; }
  };
  const logger = (level) => function () {
    let line = '';
    for (let i = 0; i < arguments.length && line.length <= maxLogChars; i++) line += (i ? ' ' : '') + show(arguments[i]);
    hostLog(level, line.length > maxLogChars ? slice(line, 0, maxLogChars) : line);
  };
  globalThis.console = { log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug') };
  return async function (argsJson) {
    const r = await run(parse(argsJson));
    if (r === undefined) return 'null';
    const text = stringify(r);
    if (typeof text !== 'string') return 'null';
    return text.length > maxResultChars ? ${JSON.stringify(RESULT_TOO_LARGE)} : text;
  };
})`;

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
  let callFn;
  try {
    const prelude = installPrelude(ctx, logs);
    if (prelude.error) return failure(ctx, prelude.error, logs, limits, 'internal');
    callFn = prelude.value;
    const loaded = ctx.evalCode(job.code, 'function.js', { type: 'global' });
    if (loaded.error) return failure(ctx, loaded.error, logs, limits, 'syntax');
    loaded.value.dispose();

    const kind = ctx.evalCode('typeof run');
    if (kind.error) return failure(ctx, kind.error, logs, limits, 'runtime');
    const type = ctx.typeof(kind.value) === 'string' ? ctx.getString(kind.value) : '';
    kind.value.dispose();
    if (type !== 'function') {
      return { ok: false, kind: 'invalid', error: 'The code must define `async function run(args)`', logs };
    }
    if (job.op === 'analyse') return { ok: true, logs };

    // The arguments enter as a JSON string; the result leaves as JSON text: no object handle crosses the boundary.
    const argsHandle = ctx.newString(job.argsJson);
    const call = ctx.callFunction(callFn, ctx.undefined, argsHandle);
    argsHandle.dispose();
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
          return resultReply(text, logs);
        }
        if (state.type === 'rejected') return failure(ctx, state.error, logs, limits, 'runtime');
        if (Date.now() > deadline) return { ok: false, kind: 'timeout', error: 'The function ran past its time limit and was stopped', logs };
        if (done) {
          return { ok: false, kind: 'runtime', error: 'run(args) never settled: it awaits something that cannot resolve here', logs };
        }
      }
    } finally {
      promise.dispose();
    }
  } finally {
    try {
      callFn?.dispose();
      ctx.dispose();
      rt.dispose();
    } catch {
      // Jobs left queued by an interrupted endless promise chain still hold objects, and freeing the runtime then
      // aborts the WebAssembly module. The reply computed above stands; the next job gets a fresh module.
      quickjs = undefined;
    }
  }
}

function installPrelude(ctx, logs) {
  const hostLog = ctx.newFunction('log', (levelHandle, textHandle) => {
    if (logs.length >= MAX_LOG_LINES) return;
    const level = ctx.typeof(levelHandle) === 'string' ? ctx.getString(levelHandle) : 'log';
    const text = ctx.typeof(textHandle) === 'string' ? ctx.getString(textHandle) : '';
    logs.push(`[${level}] ${text}`.slice(0, MAX_LOG_CHARS));
  });
  const factory = ctx.evalCode(PRELUDE, 'prelude.js');
  if (factory.error) {
    hostLog.dispose();
    return factory;
  }
  const maxResult = ctx.newNumber(MAX_RESULT_CHARS);
  const maxLog = ctx.newNumber(MAX_LOG_CHARS);
  const made = ctx.callFunction(factory.value, ctx.undefined, hostLog, maxResult, maxLog);
  for (const h of [factory.value, hostLog, maxResult, maxLog]) h.dispose();
  return made;
}

/**
 * The parent parses the text on the main thread: it must be JSON, and shallow enough that parsing it and
 * serialising it again (traces, the LLM's tool result) cannot overflow a stack there.
 */
function resultReply(text, logs) {
  if (text === RESULT_TOO_LARGE || text.length > MAX_RESULT_CHARS) {
    return { ok: false, kind: 'limit', error: `The result is larger than ${MAX_RESULT_CHARS} characters`, logs };
  }
  if (nestingDepth(text) > MAX_RESULT_DEPTH) {
    return { ok: false, kind: 'limit', error: `The result is nested more than ${MAX_RESULT_DEPTH} levels deep`, logs };
  }
  try {
    JSON.parse(text);
  } catch {
    return { ok: false, kind: 'invalid', error: 'The result could not be serialised as JSON', logs };
  }
  return { ok: true, resultJson: text, logs };
}

/** Deepest nesting of arrays and objects in JSON text (brackets inside strings do not count). */
function nestingDepth(text) {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) max = Math.max(max, ++depth);
    else if (c === 93 || c === 125) depth--;
  }
  return max;
}

function failure(ctx, handle, logs, limits, fallbackKind) {
  const err = describeThrown(ctx, handle);
  handle.dispose();
  const message = typeof err === 'object' && err !== null ? `${text(err.name ?? 'Error')}: ${text(err.message ?? '')}` : text(err);
  const interrupted = /interrupted/i.test(message);
  // An interrupt inside some built-ins surfaces as another error (seen: "TypeError: not a function" from an endless
  // `await` loop): whatever failed after the deadline failed because of it.
  if (!limits.memoryExceeded && Date.now() > limits.deadline) {
    return { ok: false, kind: 'timeout', error: 'The function ran past its time limit and was stopped', logs };
  }
  if ((interrupted && limits.memoryExceeded) || /out of memory/i.test(message) || err === null) {
    return { ok: false, kind: 'memory', error: 'The function exceeded its memory limit and was stopped', logs };
  }
  if (/stack overflow/i.test(message)) {
    return { ok: false, kind: 'memory', error: 'The function exceeded its stack limit (too deep recursion) and was stopped', logs };
  }
  const line = typeof err === 'object' && err?.stack ? `\n${text(err.stack).split('\n').slice(0, 5).join('\n')}` : '';
  return { ok: false, kind: fallbackKind, error: (message + line).slice(0, 4000), logs };
}

/**
 * The thrown value as plain data. Dumping runs the value's getters and toJSON inside QuickJS (still under the
 * interrupt handler); a value that cannot be described at all still ends as an error of this one call.
 */
function describeThrown(ctx, handle) {
  try {
    return ctx.dump(handle);
  } catch {
    return 'The function threw a value that cannot be described';
  }
}

/** Dumped values are plain JSON data, but any of their fields may be an object or enormous. */
function text(v) {
  const s = typeof v === 'string' ? v : safeJson(v);
  return (s ?? String(v)).slice(0, 4000);
}

function safeJson(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}
