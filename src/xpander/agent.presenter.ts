import type { AgentView } from '../agents/agent.presenter.js';

/**
 * The agent as xpander's Python SDK parses it (`Agent` and `AgentsListItem` in xpander_sdk/modules/agents): the
 * internal routes serve these shapes, `/v1` keeps the spec's (docs/decisions.md#xpander-sdk-and-cli-compatibility).
 */

/** Values of the SDK's enums: a value outside them makes the SDK's model refuse the whole agent. */
const SDK_GRAPH_TYPES: ReadonlySet<string> = new Set(['source_node', 'agent', 'tool', 'human_in_the_loop', 'xpsleep-agent-delay', 'custom_agent', 'storage', 'coding_agent', 'mcp']);
const SDK_GRAPH_SUB_TYPES: ReadonlySet<string> = new Set(['sdk', 'task', 'assistant', 'webhook', 'operation', 'custom_function', 'local_tool']);
const SDK_SOURCE_NODE_TYPES: ReadonlySet<string> = new Set(['workbench', 'sdk', 'task', 'assistant', 'webhook', 'mcp', 'a2a', 'telegram', 'slack']);
const SDK_REASONING_EFFORTS: ReadonlySet<string> = new Set(['low', 'medium', 'high']);
/** The SDK requires `framework`; an agent that never set one runs on Agentry's own runtime, xpander's default name. */
const DEFAULT_FRAMEWORK = 'agno';

/** A tool definition as the SDK's `Tool` model reads it (`tools[]` of GET /agents/{id}, GET /tools/{id}). */
export interface XpanderTool {
  id: string;
  name: string;
  method: string;
  path: string;
  description: string;
  parameters: Record<string, unknown>;
  connector_id: string;
  operation_id: string;
  is_local: false;
  should_add_to_graph: false;
}

type Graph = { type?: unknown; sub_type?: unknown }[];

/** GET /agents/{id}: the full agent with resolved tool definitions instead of the create-form entries. */
export function presentXpanderAgent(view: AgentView, tools: XpanderTool[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...view, tools, framework: view.framework ?? DEFAULT_FRAMEWORK };
  // `environment_id: str = None` in the SDK: absent is accepted, an explicit null is refused.
  if (out.environment_id === null) delete out.environment_id;
  // The SDK knows low|medium|high; Agentry's `xhigh` is the highest effort the SDK can name.
  if (typeof out.llm_reasoning_effort === 'string' && !SDK_REASONING_EFFORTS.has(out.llm_reasoning_effort)) out.llm_reasoning_effort = 'high';
  // Graph items and source nodes of kinds the SDK's enums do not list (skills, workflows) are left out.
  out.graph = ((view.graph as Graph | null) ?? []).filter((g) => SDK_GRAPH_TYPES.has(String(g.type)) && (g.sub_type == null || SDK_GRAPH_SUB_TYPES.has(String(g.sub_type))));
  out.source_nodes = ((view.source_nodes as { type?: unknown }[] | null) ?? []).filter((n) => SDK_SOURCE_NODE_TYPES.has(String(n.type)));
  return out;
}

/** GET /agents/list and GET /v1/agents/list items (`AgentsListItem`: `icon` and `instructions` are required). */
export function presentXpanderAgentListItem(view: AgentView): Record<string, unknown> {
  return {
    id: view.id,
    name: view.name,
    icon: view.icon ?? '',
    instructions: view.instructions ?? { role: [], goal: [], general: '' },
    status: view.status,
    organization_id: view.organization_id,
    created_at: view.created_at,
    description: view.description ?? null,
    access_scope: view.access_scope ?? null,
    created_by: view.created_by ?? null,
    type: view.type ?? null,
    // Read by the CLI's agent table (framework, model, version, deployment type).
    unique_name: view.unique_name,
    framework: view.framework ?? DEFAULT_FRAMEWORK,
    model_provider: view.model_provider,
    model_name: view.model_name,
    version: view.version,
    deployment_type: view.deployment_type ?? null,
    using_nemo: view.using_nemo ?? false,
    deletable: view.deletable ?? true,
    webhook_url: view.webhook_url,
  };
}
