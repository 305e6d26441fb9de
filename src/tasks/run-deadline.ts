/**
 * The wall-clock bound of one run (AGENTRY_RUN_TIMEOUT_MS, docs/operations.md#settings, default 1 h): a run still
 * working when it passes is aborted and its task ends in `error` with a result that says so, which frees its worker
 * slot. Without it a run with large tool_call_limit / max_iterations, or a tool that keeps answering slowly, held its
 * slot for hours.
 *
 * What counts: the time the run works. Waits for a person (RunRequest.requestApproval: supervised tool calls,
 * workflow approval steps) and for a child task (RunRequest.parkWhile: sub-agents, workflow steps) are not counted:
 * a person may take days, and a child is bounded by its own deadline. The clock stands still while any such wait is
 * in progress (several may overlap: parallel tool calls, parallel workflow branches).
 *
 * Each execution attempt has its own deadline: a task reclaimed after a crash (durable resume) or retried by its
 * retry_strategy starts a fresh one. Attempts are capped (max_attempts), so a task's whole time stays bounded by
 * attempts x deadline.
 *
 * Where it is checked: the RunSupervisor's control loop (run-supervisor.ts), which visits every run this worker
 * holds every 250 ms anyway. A run costs nothing for it beyond this small record: no timer, no signal, no wrapper.
 * (As a TaskRunner decorator with its own timer and linked signal it cost ~30% of a synchronous run's CPU.)
 */
export interface WorkClock {
  /** When the run's working time runs out if it does not wait meanwhile; Infinity: no deadline. */
  deadlineAt: number;
  /** Waits in progress that stop the clock. */
  waits: number;
  /** When the current stretch of waiting began (meaningful while waits > 0). */
  waitingSince: number;
}

export function startWorkClock(now: number, timeoutMs: number): WorkClock {
  return { deadlineAt: timeoutMs > 0 ? now + timeoutMs : Infinity, waits: 0, waitingSince: 0 };
}

/** `waiting`, with the clock stopped until it settles; the time waited moves the deadline out by as much. */
export async function notCounted<T>(clock: WorkClock, now: () => number, waiting: Promise<T>): Promise<T> {
  if (clock.waits++ === 0) clock.waitingSince = now();
  try {
    return await waiting;
  } finally {
    if (--clock.waits === 0) clock.deadlineAt += now() - clock.waitingSince;
  }
}

export function pastDeadline(clock: WorkClock, now: number): boolean {
  return clock.waits === 0 && now >= clock.deadlineAt;
}

/** The result of a task whose run was stopped by its deadline. */
export function deadlineMessage(timeoutMs: number): string {
  return `The run exceeded its time limit of ${describe(timeoutMs)} (AGENTRY_RUN_TIMEOUT_MS) and was stopped`;
}

/** The result of a task whose approval nobody decided within AGENTRY_APPROVAL_TIMEOUT_MS. */
export function approvalExpiredMessage(tool: string, timeoutMs: number): string {
  return `Nobody approved or rejected the call to "${tool}" within ${describe(timeoutMs)} (AGENTRY_APPROVAL_TIMEOUT_MS); the task was stopped without making it`;
}

function describe(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
