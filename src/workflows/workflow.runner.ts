import type { Clock } from '../lib/clock.js';
import { aborted, outcome, outputProblem, promptOf } from '../external-agents/remote-call.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import { nextRunNumber } from '../runtime/history.js';
import type { RunOutcome, RunRequest, TaskRunner } from '../runtime/task-runner.js';
import type { TaskEvent } from '../tasks/task.types.js';
import { StepRejected, WorkflowEngine, type StepMark } from './workflow-engine.js';
import { asText } from './workflow-mapping.js';
import type { StepPorts } from './workflow-steps.js';
import type { WorkflowDefinition } from './workflow.schemas.js';

/** What an orchestration agent's `orchestration_nodes` hold: the workflow and the version this agent version runs. */
export interface WorkflowNode {
  type: 'workflow';
  workflow_id: string;
  /** Absent: the workflow's current version. */
  version?: number;
}

export interface WorkflowRunnerDeps {
  workflows: { runnable(orgId: string, id: string, version?: number): Promise<{ version: number; definition: WorkflowDefinition }> };
  /** The task's whole trace (TaskQueries.events), read when an attempt resumes a run. */
  trace(orgId: string, taskId: string): Promise<TaskEvent[]>;
  ports: StepPorts;
  clock: Clock;
  /** Checks the result against the task's output_schema (the invocation's, else the agent's) with output_format json. */
  schemaChecker: SchemaChecker;
}

/**
 * The runner of agent type `orchestration` (registered in the agent-type registry): a task of such an agent runs the
 * workflow its configuration points at. Everything around the run (queue, lease, retries, stop, webhooks, waiters)
 * stays the worker's. A later attempt of the same run (after a crash, a lost lease or a retry) first reads the trace
 * and reuses every step output it finds, so a finished step never runs twice.
 */
export class WorkflowRunner implements TaskRunner {
  constructor(private readonly d: WorkflowRunnerDeps) {}

  async run(req: RunRequest): Promise<RunOutcome> {
    const { clock } = this.d;
    const prompt = promptOf(req);
    const node = workflowNodeOf(req.agent);
    if (!node) return outcome(req, clock, 'error', 'This orchestration agent names no workflow: POST /v1/workflows/{id}/agent links one', prompt);
    let def: WorkflowDefinition;
    try {
      def = (await this.d.workflows.runnable(req.agent.organization_id, node.workflow_id, node.version)).definition;
    } catch (e) {
      return outcome(req, clock, 'error', `The workflow ${node.workflow_id} (version ${node.version ?? 'current'}) cannot be run: ${e instanceof Error ? e.message : String(e)}`, prompt);
    }
    const run = req.run ?? nextRunNumber(req.history);
    const { done, started } = req.task.execution_attempts > 1 ? await this.recorded(req, run) : { done: new Map<string, unknown>(), started: new Set<string>() };
    const engine = new WorkflowEngine(req, def, run, done, started, this.d.ports, clock);
    try {
      const text = asText(await engine.execute());
      // As for remote agents (there is no model to ask again): a result that breaks output_schema fails the task.
      const problem = await outputProblem(req, text, this.d.schemaChecker, "The workflow's result");
      if (problem) return outcome(req, clock, 'failed', problem, prompt);
      return outcome(req, clock, 'completed', text, prompt);
    } catch (e) {
      if (req.signal.aborted) throw aborted(req, clock, prompt);
      return outcome(req, clock, e instanceof StepRejected ? 'failed' : 'error', e instanceof Error ? e.message : String(e), prompt);
    }
  }

  /**
   * Outputs of the steps earlier attempts of this run finished (their result is in the trace, without error), and the
   * steps they started without an end (a crash or lost lease mid-step).
   */
  private async recorded(req: RunRequest, run: number): Promise<{ done: Map<string, unknown>; started: Set<string> }> {
    const done = new Map<string, unknown>();
    const started = new Set<string>();
    for (const e of await this.d.trace(req.task.organization_id, req.task.id)) {
      const mark = e.data.workflow_step as StepMark | undefined;
      if (!mark || mark.run !== run) continue;
      if (e.type === 'tool_call_request') started.add(mark.id);
      else if (e.type === 'tool_call_result') {
        started.delete(mark.id);
        if (e.data.is_error === false) done.set(mark.id, e.data.result);
      }
    }
    return { done, started };
  }
}

export function workflowNodeOf(agent: Record<string, unknown>): WorkflowNode | undefined {
  const nodes = Array.isArray(agent.orchestration_nodes) ? agent.orchestration_nodes : [];
  const n = nodes.find((x): x is WorkflowNode => !!x && typeof x === 'object' && (x as WorkflowNode).type === 'workflow' && typeof (x as WorkflowNode).workflow_id === 'string');
  return n && { type: 'workflow', workflow_id: n.workflow_id, version: typeof n.version === 'number' ? n.version : undefined };
}
