import { z } from 'zod';

/**
 * A workflow definition (docs/workflows.md): a directed acyclic graph of steps. The shapes are checked here; what
 * needs the whole graph (references, cycles, reachability, width) is checked by workflow-graph.ts, and what needs
 * the organization (agents, connections, functions exist) by the service.
 */

/** Bounds that keep one workflow from hanging or starving the service (a 422 above them). */
export const WORKFLOW_LIMITS = {
  maxSteps: 50,
  /** Steps of one parallel step running at once, nested parallels included. */
  maxParallelWidth: 8,
  maxCases: 20,
  defaultTimeoutSeconds: 300,
  maxTimeoutSeconds: 3600,
  /** A step output larger than this (as JSON) fails the step: it is kept in the trace and reused on resume. */
  maxOutputBytes: 256 * 1024,
} as const;

export const STEP_ID_RE = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const stepId = () => z.string().regex(STEP_ID_RE, 'a step id is a letter then up to 63 letters, digits, _ or -');
const ref = () => z.string().min(1).max(128);
/** A JSON value whose strings may hold `{{ ... }}` references (workflow-mapping.ts). */
const template = () => z.unknown();

const base = {
  id: stepId(),
  name: z.string().max(200).optional(),
};
/**
 * Only steps that wait on something outside the run take a timeout: a condition decides at once and a parallel step
 * ends with its branches (each bounded by its own steps), so on them the field would be accepted and do nothing.
 */
const timeout = (describe: string) => ({ timeout_seconds: z.number().int().min(1).max(WORKFLOW_LIMITS.maxTimeoutSeconds).optional().describe(describe) });
const actingTimeout = timeout(`Seconds the step may take (default ${WORKFLOW_LIMITS.defaultTimeoutSeconds}); past them it fails.`);
const next = stepId().nullable().default(null).describe('The step that runs after this one; null ends this path (or branch).');

const AgentStep = z.strictObject({ ...base, ...actingTimeout, type: z.literal('agent'), agent_id: ref(), input: template().default('{{input.text}}'), additional_context: z.string().max(10_000).optional(), next });
const ActionStep = z.strictObject({ ...base, ...actingTimeout, type: z.literal('action'), connection_id: ref(), operation_id: ref().describe("The connection's operation, by catalog id or operationId."), input: template().default({}), next });
const FunctionStep = z.strictObject({ ...base, ...actingTimeout, type: z.literal('custom_function'), custom_function_id: ref(), input: template().default({}), next });
export const CONDITION_OPERATORS = ['equals', 'not_equals', 'contains', 'gt', 'lt', 'exists'] as const;
const ConditionCase = z.strictObject({
  operator: z.enum(CONDITION_OPERATORS).default('equals').describe('How the step value is compared with `value`.'),
  value: z.unknown().optional(),
  next: stepId().describe('The step that runs when this case matches.'),
});
const ConditionStep = z.strictObject({
  ...base,
  type: z.literal('condition'),
  value: template(),
  cases: z.array(ConditionCase).min(1).max(WORKFLOW_LIMITS.maxCases).describe('Checked in order; the first match decides the next step.'),
  /** Where to go when no case matches; null ends this path. */
  default: stepId().nullable().default(null).describe('The step that runs when no case matches; null ends this path.'),
});
const ParallelStep = z.strictObject({ ...base, type: z.literal('parallel'), branches: z.array(stepId()).min(1).max(WORKFLOW_LIMITS.maxParallelWidth).describe('First steps of the branches that run at once; the step ends when all have.'), next });
const ApprovalStep = z.strictObject({
  ...base,
  ...timeout('Seconds a decision may take; past them the step fails. Without it the step waits until someone decides or the task is stopped.'),
  type: z.literal('approval'),
  message: template().default('Approve this step?').describe('What the person approving is shown (may hold references).'),
  next,
});

export const WorkflowStep = z.discriminatedUnion('type', [AgentStep, ActionStep, FunctionStep, ConditionStep, ParallelStep, ApprovalStep]);
export type WorkflowStep = z.output<typeof WorkflowStep>;
export type StepType = WorkflowStep['type'];

const definitionFields = {
  name: z.string().trim().min(1).max(256),
  description: z.string().max(10_000).default(''),
  /** The first step; the first of `steps` when absent. */
  start: stepId().optional().describe('The first step; the first of `steps` when absent.'),
  steps: z.array(WorkflowStep).min(1).max(WORKFLOW_LIMITS.maxSteps).describe('The steps of the graph (docs/workflows.md).'),
  /** The run's result; the output of the last step that ran when absent. */
  output: template().optional().describe("The run's result, with references; the last step's output when absent."),
};

export const CreateWorkflowBody = z.strictObject(definitionFields);
export type WorkflowDefinition = z.output<typeof CreateWorkflowBody>;
/** PATCH replaces the fields it names; the resulting definition is checked as a whole. */
export const PatchWorkflowBody = z.strictObject({ ...definitionFields, description: z.string().max(10_000) }).partial();
export type PatchWorkflowInput = z.output<typeof PatchWorkflowBody>;

const wfId = () => z.string().min(1).max(128);
export const WorkflowIdParams = z.strictObject({ workflow_id: wfId() });
export const WorkflowVersionParams = z.strictObject({ workflow_id: wfId(), version: z.coerce.number().int().min(1) });
