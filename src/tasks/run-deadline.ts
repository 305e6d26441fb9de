import { linkedController } from '../lib/abort.js';
import { RunAbortedError, type RunOutcome, type RunRequest, type TaskRunner } from '../runtime/task-runner.js';

/**
 * The wall-clock bound of one run (AGENTRY_RUN_TIMEOUT_MS, docs/operations.md#settings): a run still working when it
 * passes is aborted and its task ends in `error` with a result that says so, which frees its worker slot. Without it a
 * run with huge tool_call_limit / max_iterations, or a tool that keeps answering slowly, held its slot for ever.
 *
 * What counts: the time the run works. Waits for a person (RunRequest.requestApproval: supervised tool calls,
 * workflow approval steps) and for a child task (RunRequest.parkWhile: sub-agents, workflow steps) are not counted:
 * a person may take days, and a child is bounded by its own deadline. The clock is paused while any such wait is in
 * progress (several may overlap: parallel tool calls, parallel workflow branches).
 *
 * Each execution attempt has its own deadline: a task reclaimed after a crash (durable resume) or retried by its
 * retry_strategy starts a fresh one. The time lost to a crash is not the run's; attempts are capped (max_attempts),
 * so a task's whole time stays bounded by attempts x deadline.
 *
 * The interface for the worker (task.worker.ts): this is a TaskRunner decorator and needs nothing from the worker
 * beyond RunRequest. Any wait the worker adds that should not count must go through `requestApproval` or
 * `parkWhile` of the request it is given; a wait that hands the task back to the queue ends the attempt, and the
 * resumed run gets a fresh deadline.
 */
export class RunDeadlineRunner implements TaskRunner {
  constructor(
    private readonly inner: TaskRunner,
    private readonly timeoutMs: number,
    /** How long an aborted run is given to return before its outcome is recorded without it (a tool that ignores its signal). */
    private readonly graceMs = 5_000,
  ) {}

  async run(req: RunRequest): Promise<RunOutcome> {
    if (this.timeoutMs <= 0) return this.inner.run(req);
    // Linked, not AbortSignal.any (~20 us a call in Node 20, on every run): see linkedController.
    const link = linkedController(req.signal);
    const own = link.controller;
    const message = `The run exceeded its time limit of ${describe(this.timeoutMs)} (AGENTRY_RUN_TIMEOUT_MS) and was stopped`;
    const clock = new PausableTimer(this.timeoutMs, () => own.abort(new RunTimeoutError(message)));
    const bounded: RunRequest = {
      ...req,
      signal: own.signal,
      requestApproval: (r) => clock.pausedWhile(req.requestApproval(r)),
      parkWhile: req.parkWhile ? (waiting) => clock.pausedWhile(req.parkWhile!(waiting)) : undefined,
    };
    const running = this.inner.run(bounded);
    try {
      const outcome = await Promise.race([running, afterAbort(own.signal, this.graceMs)]);
      // A run that turned the abort into a failure of its own (a tool call cut short) ends with the deadline's message.
      if (own.signal.aborted && !req.signal.aborted && outcome.status !== 'completed') return { ...outcome, status: 'error', result: message };
      return outcome;
    } catch (e) {
      if (!own.signal.aborted || req.signal.aborted) throw e;
      // A run that did not return within the grace period ends in the background; nothing waits for it.
      running.catch(() => undefined);
      const spent = e instanceof RunAbortedError ? e : undefined;
      return {
        status: 'error',
        result: message,
        tokens: spent?.tokens ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        messages: spent?.messages ?? [],
        llm_model_provider: null,
        llm_model_name: null,
      };
    } finally {
      clock.stop();
      link.release();
    }
  }
}

export class RunTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunTimeoutError';
  }
}

/** Rejects `graceMs` after `signal` aborts (never when it does not). */
function afterAbort(signal: AbortSignal, graceMs: number): Promise<never> {
  return new Promise((_resolve, reject) => {
    const arm = () => setTimeout(() => reject(signal.reason), graceMs).unref();
    signal.addEventListener('abort', arm, { once: true });
  });
}

function describe(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/** A timer that stands still while at least one wait given to pausedWhile is in progress. */
class PausableTimer {
  private left: number;
  private startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private waits = 0;
  private stopped = false;

  constructor(
    ms: number,
    private readonly onExpiry: () => void,
  ) {
    this.left = ms;
    this.timer = setTimeout(() => this.expire(), ms).unref();
  }

  async pausedWhile<T>(waiting: Promise<T>): Promise<T> {
    if (this.waits++ === 0 && !this.stopped) {
      clearTimeout(this.timer);
      this.left -= Date.now() - this.startedAt;
    }
    try {
      return await waiting;
    } finally {
      if (--this.waits === 0 && !this.stopped) {
        this.startedAt = Date.now();
        this.timer = setTimeout(() => this.expire(), Math.max(0, this.left)).unref();
      }
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private expire(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.onExpiry();
  }
}
