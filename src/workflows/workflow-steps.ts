import type { ToolCallContext } from '../tools/tool-kinds.js';
import { asText } from './workflow-mapping.js';
import type { WorkflowStep } from './workflow.schemas.js';

/**
 * What each side-effecting step kind does, one entry per kind (ARCHITECTURE rule 8). Condition, parallel and approval
 * steps are the engine's own (workflow-engine.ts): they decide where the run goes rather than act.
 */

/** What the executors need from other domains, wired in workflows.module.ts. */
export interface StepPorts {
  /** Runs an agent of the organization as a child task and returns its result (the sub-agent tool's delegate). */
  delegate(agentId: string, args: { input: string; additional_context?: string }, ctx: ToolCallContext): Promise<unknown>;
  /** Invokes a connection's operation as connector tools do; answers the status and the parsed result. */
  invokeOperation(orgId: string, connectionId: string, operationId: string, payload: Record<string, unknown>, signal: AbortSignal): Promise<{ status_code: number; result: unknown }>;
  /** Runs a custom function in the sandbox; throws with a message meant for people. */
  callFunction(orgId: string, functionId: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

export type ActingStep = Extract<WorkflowStep, { type: 'agent' | 'action' | 'custom_function' }>;

type Executor<S extends ActingStep> = (step: S, input: unknown, ctx: ToolCallContext, ports: StepPorts) => Promise<unknown>;

export const STEP_EXECUTORS: { [K in ActingStep['type']]: Executor<Extract<ActingStep, { type: K }>> } = {
  agent: (step, input, ctx, ports) => ports.delegate(step.agent_id, { input: asText(input), additional_context: step.additional_context }, ctx),

  async action(step, input, ctx, ports) {
    const r = await ports.invokeOperation(ctx.organizationId, step.connection_id, step.operation_id, asObject(input, step.id), ctx.signal);
    // An error answer is a failed step: the next step would otherwise act on an error body.
    if (r.status_code >= 400) throw new Error(`the operation answered HTTP ${r.status_code}: ${asText(r.result).slice(0, 300)}`);
    return r;
  },

  custom_function: (step, input, ctx, ports) => ports.callFunction(ctx.organizationId, step.custom_function_id, asObject(input, step.id), ctx.signal),
};

function asObject(v: unknown, stepId: string): Record<string, unknown> {
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  throw new Error(`the input of step '${stepId}' must map to a JSON object`);
}

export function isActing(step: WorkflowStep): step is ActingStep {
  return step.type in STEP_EXECUTORS;
}
