import type { Awaitable } from '../../lib/awaitable.js';
import type { GraphItem, RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';
import { toolName } from './index.js';

export interface WorkflowToolDeps {
  /** The workflow's name, description and orchestration agent; undefined when it no longer exists. */
  describe(organizationId: string, workflowId: string): Promise<{ name: string; description: string; agentId: string | null } | undefined>;
  /** Runs an agent as a child task and returns its result (the sub-agent tool's delegate: waiting, stop, bounds). */
  delegate(agentId: string, args: { input: string; additional_context?: string }, ctx: ToolCallContext): Promise<unknown>;
}

const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    input: { type: 'string', description: "The workflow's input text (its steps read it as {{input.text}}); JSON when the workflow expects fields." },
    additional_context: { type: 'string', description: 'Optional background for the run.' },
  },
  required: ['input'],
  additionalProperties: false,
};

/**
 * Workflows attached to an agent (graph items of type `workflow`, from `tools: [{type:"workflow", workflow_id}]`):
 * each becomes a tool that runs the workflow as a child task of its orchestration agent and returns the run's result.
 * A workflow deleted (or without an agent) after it was attached simply is not offered.
 */
export class WorkflowToolProvider implements RuntimeToolProvider {
  constructor(private readonly deps: WorkflowToolDeps) {}

  buildTools(agent: RunContextAgent, ctx: ToolCallContext): Awaitable<RuntimeTool[]> {
    const items = agent.graph.filter((g) => g.type === 'workflow');
    if (!items.length) return [];
    return Promise.all(items.map((item) => this.toolFor(item, ctx))).then((tools) => tools.filter((t): t is RuntimeTool => t !== undefined));
  }

  private async toolFor(item: GraphItem, ctx: ToolCallContext): Promise<RuntimeTool | undefined> {
    const info = await this.deps.describe(ctx.organizationId, item.item_id);
    if (!info?.agentId) return undefined;
    const agentId = info.agentId;
    return {
      name: toolName(`workflow_${info.name}`, `workflow_${item.item_id.slice(0, 8)}`),
      description: `Run the workflow "${info.name}" and get its result.${info.description ? ` ${info.description}` : ''}`,
      inputSchema: INPUT_SCHEMA,
      // Its steps may call connector operations: a supervised agent asks before starting it.
      mutating: true,
      graphItemId: item.id ?? item.item_id,
      execute: (args, callCtx) =>
        this.deps.delegate(agentId, { input: String(args.input ?? ''), additional_context: typeof args.additional_context === 'string' ? args.additional_context : undefined }, callCtx),
    };
  }
}
