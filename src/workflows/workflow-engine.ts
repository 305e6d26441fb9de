import type { Clock } from '../lib/clock.js';
import type { RunRequest } from '../runtime/task-runner.js';
import type { ToolCallContext } from '../tools/tool-kinds.js';
import { startOf } from './workflow-graph.js';
import { resolveTemplate, type MappingScope } from './workflow-mapping.js';
import { isActing, STEP_EXECUTORS, type StepPorts } from './workflow-steps.js';
import { WORKFLOW_LIMITS, type WorkflowDefinition, type WorkflowStep } from './workflow.schemas.js';
import { raceAbort } from '../lib/abort.js';

/** A step failed (or timed out); the run ends `error` with this message. */
export class StepFailed extends Error {
  constructor(readonly stepId: string, message: string) {
    super(`Step '${stepId}' failed: ${message}`);
    this.name = 'StepFailed';
  }
}

/** A person rejected an approval step; the run ends `failed`. */
export class StepRejected extends Error {
  constructor(readonly stepId: string) {
    super(`Step '${stepId}' was rejected by a person reviewing this run`);
    this.name = 'StepRejected';
  }
}

/** Marks the trace events of workflow steps, so a later attempt of the same run finds what already finished. */
export interface StepMark {
  id: string;
  type: WorkflowStep['type'];
  run: number;
  /** The step's `name`, when it has one: the label a person reading the trace knows the step by. */
  name?: string;
}

/**
 * One run of a workflow inside a task. Every step is two trace events, `tool_call_request` before it acts and
 * `tool_call_result` after (with `workflow_step` = StepMark and the output as `result`), and the result is made
 * durable (RunRequest.checkpoint) before the next step starts. `recorded` holds the outputs a previous attempt of
 * this run finished: such a step is not run again, its output is reused.
 */
export class WorkflowEngine {
  private readonly byId: Map<string, WorkflowStep>;
  private readonly outputs: Map<string, unknown>;
  /** The worker holds one pending approval per task: parallel approvals ask one after the other. */
  private approvals: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly req: RunRequest,
    private readonly def: WorkflowDefinition,
    private readonly run: number,
    recorded: ReadonlyMap<string, unknown>,
    /** Steps an earlier attempt of this run started without recording their end: they run again (at least once). */
    private readonly interrupted: ReadonlySet<string>,
    private readonly ports: StepPorts,
    private readonly clock: Clock,
  ) {
    this.byId = new Map(def.steps.map((s) => [s.id, s]));
    this.outputs = new Map(recorded);
  }

  private get scope(): MappingScope {
    const { text, user, files } = this.req.task.input;
    return { input: { text, user, files, additional_context: this.req.task.additional_context }, outputs: this.outputs };
  }

  /** Runs from the start step; resolves with the run's result (the `output` template, else the last output). */
  async execute(): Promise<unknown> {
    const last = await this.chain(startOf(this.def), this.req.signal);
    return this.def.output !== undefined ? resolveTemplate(this.def.output, this.scope) : last;
  }

  /** Runs a step and its successors until a step hands over to nobody; resolves with the last output. */
  private async chain(from: string | null, signal: AbortSignal): Promise<unknown> {
    let last: unknown = null;
    for (let id = from; id; ) {
      signal.throwIfAborted();
      const step = this.byId.get(id)!;
      last = this.outputs.has(id) ? this.outputs.get(id) : await this.step(step, signal);
      id = nextOf(step, last);
    }
    return last;
  }

  private async step(step: WorkflowStep, signal: AbortSignal): Promise<unknown> {
    const mark: StepMark = { id: step.id, type: step.type, run: this.run, ...(step.name !== undefined && { name: step.name }) };
    const callId = `wf-${this.run}-${step.id}`;
    const input = inputOf(step) === undefined ? null : resolveTemplate(inputOf(step), this.scope);
    const rerun = this.interrupted.has(step.id);
    await this.req.emit('tool_call_request', { tool_call_id: callId, tool_name: `workflow_${step.type}`, graph_item_id: step.id, payload: input, workflow_step: mark, ...(rerun ? { rerun_after_interruption: true } : {}) });
    // Durable before it acts: after a crash the trace shows the step started (and may have acted) before it ends.
    await this.req.checkpoint?.();
    signal.throwIfAborted();
    const started = this.clock.now();
    let output: unknown;
    let failure: Error | undefined;
    try {
      output = await this.act(step, input, signal, callId);
      const size = JSON.stringify(output ?? null).length;
      if (size > WORKFLOW_LIMITS.maxOutputBytes) throw new StepFailed(step.id, `its output is ${size} bytes; the limit is ${WORKFLOW_LIMITS.maxOutputBytes}`);
    } catch (e) {
      if (this.req.signal.aborted) throw e;
      // Only a failing sibling branch aborts `signal` without the run's: say so rather than repeat its error.
      if (signal.aborted) failure = new StepFailed(step.id, 'cancelled: another branch of its parallel step failed');
      else failure = e instanceof StepFailed || e instanceof StepRejected ? e : new StepFailed(step.id, e instanceof Error ? e.message : String(e));
    }
    await this.req.emit('tool_call_result', {
      tool_call_id: callId,
      tool_name: `workflow_${step.type}`,
      graph_item_id: step.id,
      payload: input,
      result: failure ? failure.message : (output ?? null),
      duration_ms: this.clock.now() - started,
      is_error: failure !== undefined,
      workflow_step: mark,
    });
    if (failure) throw failure;
    // Durable before anything else acts: a crash from here on resumes after this step.
    await this.req.checkpoint?.();
    this.req.signal.throwIfAborted();
    this.outputs.set(step.id, output ?? null);
    return output ?? null;
  }

  private async act(step: WorkflowStep, input: unknown, parent: AbortSignal, callId: string): Promise<unknown> {
    switch (step.type) {
      case 'condition':
        return decide(step, input);
      case 'parallel':
        return this.parallel(step, parent);
      case 'approval':
        return this.approve(step, input, parent);
    }
    if (!isActing(step)) throw new Error(`unknown step type`);
    const ms = (step.timeout_seconds ?? WORKFLOW_LIMITS.defaultTimeoutSeconds) * 1000;
    const timeout = AbortSignal.timeout(ms);
    const signal = AbortSignal.any([parent, timeout]);
    const ctx: ToolCallContext = {
      organizationId: this.req.task.organization_id,
      taskId: this.req.task.id,
      agentId: this.req.agent.id,
      signal,
      userTokens: this.req.extras.userTokens ?? {},
      userId: this.req.task.user_id ?? this.req.task.input.user?.id ?? undefined,
      emit: (type, data) => this.req.emit(type, data),
      callDepth: this.req.task.call_depth,
      // A step waiting on its child task lends the worker slot (RunRequest.parkWhile).
      parkWhile: this.req.parkWhile,
      toolCallId: callId,
    };
    const exec = STEP_EXECUTORS[step.type] as (s: typeof step, i: unknown, c: ToolCallContext, p: StepPorts) => Promise<unknown>;
    try {
      return await raceAbort(exec(step, input, ctx, this.ports), signal);
    } catch (e) {
      if (timeout.aborted && !parent.aborted) throw new StepFailed(step.id, `it did not finish within ${ms / 1000} s`);
      throw e;
    }
  }

  /** Branches run at once; the first failure stops the others. Output: each branch's last output by its first step. */
  private async parallel(step: Extract<WorkflowStep, { type: 'parallel' }>, parent: AbortSignal): Promise<Record<string, unknown>> {
    const ac = new AbortController();
    const signal = AbortSignal.any([parent, ac.signal]);
    const settled = await Promise.allSettled(
      step.branches.map((b) =>
        this.chain(b, signal).catch((e: unknown) => {
          ac.abort(e);
          throw e;
        }),
      ),
    );
    // Every branch has ended (the others were cancelled) before the failure goes up: nothing of this run acts
    // or writes to the trace after the run's outcome.
    if (ac.signal.aborted) throw ac.signal.reason;
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return Object.fromEntries(step.branches.map((b, i) => [b, (settled[i] as PromiseFulfilledResult<unknown>).value]));
  }

  private async approve(step: Extract<WorkflowStep, { type: 'approval' }>, message: unknown, signal: AbortSignal): Promise<{ approved: true }> {
    const ask = this.approvals.then(() => this.req.requestApproval({ tool: `workflow_approval_${step.id}`, arguments: { step_id: step.id, message } }));
    this.approvals = ask.catch(() => undefined);
    // A failing sibling branch ends the wait, and so does the step's deadline when it has one; the run's outcome
    // then clears the pending decision. The deadline counts from this ask: after a crash the step asks again.
    const deadline = step.timeout_seconds === undefined ? undefined : AbortSignal.timeout(step.timeout_seconds * 1000);
    let approved: boolean;
    try {
      approved = await raceAbort(ask, deadline ? AbortSignal.any([signal, deadline]) : signal);
    } catch (e) {
      if (deadline?.aborted && !signal.aborted) throw new StepFailed(step.id, `no decision within ${step.timeout_seconds} s`);
      throw e;
    }
    this.req.signal.throwIfAborted();
    if (!approved) throw new StepRejected(step.id);
    return { approved: true };
  }
}

function inputOf(step: WorkflowStep): unknown {
  switch (step.type) {
    case 'condition':
      return step.value;
    case 'approval':
      return step.message;
    case 'parallel':
      return undefined;
    default:
      return step.input;
  }
}

/** Where a finished step hands over: a condition's recorded decision, else its `next`. */
function nextOf(step: WorkflowStep, output: unknown): string | null {
  if (step.type === 'condition') return ((output as { next?: string | null } | null)?.next ?? null) as string | null;
  return step.next;
}

function decide(step: Extract<WorkflowStep, { type: 'condition' }>, value: unknown): { value: unknown; case: number | null; next: string | null } {
  const j = step.cases.findIndex((c) => matches(c.operator, value, c.value));
  return { value, case: j < 0 ? null : j, next: j < 0 ? step.default : step.cases[j].next };
}

function matches(op: string, v: unknown, expected: unknown): boolean {
  switch (op) {
    case 'equals':
      return same(v, expected);
    case 'not_equals':
      return !same(v, expected);
    case 'contains':
      if (typeof v === 'string') return typeof expected === 'string' && v.includes(expected);
      return Array.isArray(v) && v.some((x) => same(x, expected));
    case 'gt':
      return Number(v) > Number(expected);
    case 'lt':
      return Number(v) < Number(expected);
    case 'exists':
      return v !== null && v !== undefined && v !== '';
    default:
      return false;
  }
}

/** Equal as JSON; a string compared with a string is trimmed (models end answers with newlines). */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a.trim() === b.trim();
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
