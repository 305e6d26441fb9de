import { z } from 'zod';
import { NotificationSettings } from '../notifications/notification-settings.js';
import { DEFAULT_MODEL_PROVIDER, LLM_MODEL_PROVIDERS } from '../llm/model-catalog.js';
import type { GraphItem } from '../tools/graph-item.js';
import { unsupportedPattern } from '../lib/safe-regexp.js';
import { INJECTION_CONTENT_ACTIONS, MODERATION_CATEGORIES } from '../guardrails/guardrail-vocabulary.js';
import { MAX_TOOL_CALL_LIMIT, SkillElement, TaskLevelStrategies } from './agent-settings.schemas.js';

export { MAX_ITERATIONS, MAX_TOOL_CALL_LIMIT, SkillElement, TaskLevelStrategies } from './agent-settings.schemas.js';

/**
 * The agent configuration of spec 2.1, 2.2, 2.5 and 4.1 as zod schemas. `BaseFields` carries types only; the create
 * body adds the defaults (the SCHEMA default set, docs/contract.md#agent-create) and the PATCH body makes every field
 * optional without defaults. Objects are strict: unknown and system-managed fields are `extra_forbidden`.
 */

export const AGENT_TYPES = ['manager', 'regular', 'a2a', 'curl', 'orchestration'] as const;
export const AGENT_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export const REASONING_EFFORTS = ['low', 'medium', 'high', 'xhigh'] as const;
export const OUTPUT_FORMATS = ['text', 'markdown', 'json', 'voice'] as const;
/**
 * `voice` is in the enum (spec 2.2) but this server synthesizes no speech: refused wherever a format is chosen (the
 * agent: agents/unsupported-settings.ts; an invocation: `taskOutputFormat`), with this message.
 */
export const VOICE_UNSUPPORTED = "output_format 'voice' is not supported: this server has no speech synthesis (use 'text', 'markdown' or 'json'; voice_id is stored but unused)";
/** A task's output_format (the /v1 invoke body, xpander's create-task body): the agent's enum without `voice`. */
export const taskOutputFormat = () => z.enum(OUTPUT_FORMATS).refine((f) => f !== 'voice', VOICE_UNSUPPORTED);
export const DEPLOYMENT_TYPES = ['serverless', 'container'] as const;
export const ACCESS_SCOPES = ['personal', 'organizational'] as const;
export const LLM_CREDENTIALS_KEY_TYPES = ['xpander', 'custom'] as const;
export const KNOWLEDGE_BASE_STRATEGIES = ['vanilla', 'agentic_rag'] as const;
export const MCP_TRANSPORTS = ['streamable-http', 'sse'] as const;
export const MCP_AUTH_TYPES = ['none', 'api_key', 'oauth2'] as const;

/** The fixed connector id of custom functions in `attached_tools`, and the alias accepted for it. */
export const CUSTOM_FUNCTIONS_CONNECTOR_ID = 'service-custom-functions';
export const CUSTOM_FUNCTIONS_CONNECTOR_ALIASES: ReadonlySet<string> = new Set([CUSTOM_FUNCTIONS_CONNECTOR_ID, 'xpander-custom-functions']);

const str = () => z.string();
const id = () => z.string().min(1).max(256);
const stringMap = () => z.record(z.string(), z.string());
const jsonObject = () => z.record(z.string(), z.unknown());
/** A JSON Schema whose patterns all run on RE2: one that could not be enforced is refused, not ignored. */
export const outputSchema = () => jsonObject().superRefine((s, ctx) => {
  const problem = unsupportedPattern(s);
  if (problem) ctx.addIssue({ code: 'custom', message: `output_schema: ${problem}` });
});

// ---- tool entries of create `tools` (spec 2.3), discriminated on `type`

export const ActionToolEntry = z.strictObject({ type: z.literal('action'), connection_id: id(), operation_ids: z.array(id()).min(1) });
export const CustomFunctionToolEntry = z.strictObject({ type: z.literal('custom_function'), custom_function_id: id() });
/** Defaults of inline MCP servers (transport, auth_type, ...) are applied by the mcp resolver: with `mcp_id` the registry's values win. */
export const McpToolEntry = z
  .strictObject({
    type: z.literal('mcp'),
    mcp_id: id().optional(),
    url: z.url({ protocol: /^https?$/ }).optional(),
    name: str().optional(),
    transport: z.enum(MCP_TRANSPORTS).optional(),
    auth_type: z.enum(MCP_AUTH_TYPES).optional(),
    api_key: str().optional(),
    client_id: str().optional(),
    client_secret: str().optional(),
    additional_scopes: z.array(str()).optional(),
    share_user_token_across_other_agents: z.boolean().optional(),
    headers: stringMap().optional(),
    allowed_tools: z.array(str()).optional(),
  })
  .refine((e) => Boolean(e.mcp_id) !== Boolean(e.url), { message: 'an mcp tool needs exactly one of mcp_id (registry) or url (inline server)' });
export const AgentToolEntry = z.strictObject({ type: z.literal('agent'), agent_id: id() });
export const WorkflowToolEntry = z.strictObject({ type: z.literal('workflow'), workflow_id: id() });
export const SkillToolEntry = z.strictObject({ type: z.literal('skill'), skill_name: id() });

export const ToolEntry = z.discriminatedUnion('type', [
  ActionToolEntry,
  CustomFunctionToolEntry,
  McpToolEntry,
  AgentToolEntry,
  WorkflowToolEntry,
  SkillToolEntry,
]);
export type ToolEntry = z.output<typeof ToolEntry>;
export type ToolEntryType = ToolEntry['type'];
export const TOOL_ENTRY_TYPES: readonly ToolEntryType[] = ['action', 'custom_function', 'mcp', 'agent', 'workflow', 'skill'];

// ---- spec 2.4

export const AttachedConnector = z.strictObject({ id: id(), operation_ids: z.array(id()) });

export const GraphItemSchema = z.strictObject({
  id: str().nullable().optional(),
  item_id: id(),
  name: str().nullable().default(null),
  type: id(),
  sub_type: str().nullable().default(null),
  targets: z.array(str()),
  settings: jsonObject().nullable().default(null),
  is_first: z.boolean().default(false),
});

/** One IN list per knowledge base in the search query (src/knowledge/chunk-store.repository.ts) stays small. */
export const MAX_KB_DOCUMENTS = 1000;

export const AgentKnowledgeBase = z.strictObject({
  id: id(),
  name: str().nullable().default(null),
  description: str().nullable().default(null),
  strategy: z.enum(KNOWLEDGE_BASE_STRATEGIES),
  rw: z.boolean().default(false),
  /** Document ids of this knowledge base the agent's searches are limited to; empty: all of it (docs/decisions.md#knowledge-bases). */
  documents: z.array(id()).max(MAX_KB_DOCUMENTS).default([]),
});

export const SourceNode = z.strictObject({
  id: str().nullable().default(null),
  type: id(),
  targets: z.array(str()).nullable().default(null),
  metadata: jsonObject().default({}),
});

// ---- spec 2.5

const ToolCallsCompression = z.strictObject({
  enabled: z.boolean().default(false),
  threshold: z.number().int().min(0).default(3),
  instructions: str().default(''),
});

const agnoFields = {
  session_storage: [z.boolean(), true],
  learning: [z.boolean(), false],
  agent_memories: [z.boolean(), false],
  agentic_culture: [z.boolean(), false],
  user_memories: [z.boolean(), false],
  agentic_memory: [z.boolean(), false],
  session_summaries: [z.boolean(), false],
  num_history_runs: [z.number().int().min(0), 10],
  max_tool_calls_from_history: [z.number().int().min(0), 0],
  // 0 is agno's "no limit" (the run then caps at DEFAULT_TOOL_CALL_CAP); above MAX_TOOL_CALL_LIMIT a run is a runaway.
  tool_call_limit: [z.number().int().min(0).max(MAX_TOOL_CALL_LIMIT), 0],
  coordinate_mode: [z.boolean(), true],
  pii_detection_enabled: [z.boolean(), false],
  pii_detection_mask: [z.boolean(), true],
  prompt_injection_detection_enabled: [z.boolean(), false],
  openai_moderation_enabled: [z.boolean(), false],
  // A category OpenAI never reports would never fail a task: refused, like every setting that cannot act.
  openai_moderation_categories: [z.array(z.enum(MODERATION_CATEGORIES)).nullable(), null],
  reasoning_tools_enabled: [z.boolean(), true],
  max_plan_retries: [z.number().int().min(0), 15],
  /** Not in spec 2.5: false keeps the invocation's user fields (name, e-mail, id) from the model (docs/memory.md). */
  add_user_to_context: [z.boolean(), true],
} as const;

type AgnoShape = { [K in keyof typeof agnoFields]: (typeof agnoFields)[K][0] };
const agnoBase = Object.fromEntries(Object.entries(agnoFields).map(([k, [s]]) => [k, s])) as unknown as AgnoShape;
const agnoWithDefaults = Object.fromEntries(
  Object.entries(agnoFields).map(([k, [s, d]]) => [k, (s as z.ZodType).default(d as never)]),
) as unknown as { [K in keyof AgnoShape]: z.ZodDefault<AgnoShape[K]> };

/**
 * Not in the specification (docs/guardrails.md): what a prompt injection found in files, knowledge passages or tool
 * results does, `warn` (the default when absent) or `error`. No default here, so agents that do not set it keep the
 * specification's agno_settings shape.
 */
const injectionContentAction = z.enum(INJECTION_CONTENT_ACTIONS);

export const AgnoSettings = z.strictObject({
  ...agnoWithDefaults,
  tool_calls_compression: ToolCallsCompression.prefault({}),
  prompt_injection_content_action: injectionContentAction.optional(),
});
/** PATCH: the given keys replace, the others keep their values. (`.partial()` keeps defaults in zod 4, so no defaults here.) */
const ToolCallsCompressionPatch = z.strictObject({ enabled: z.boolean(), threshold: z.number().int().min(0), instructions: str() }).partial();
const AgnoSettingsPatch = z.strictObject({ ...agnoBase, tool_calls_compression: ToolCallsCompressionPatch, prompt_injection_content_action: injectionContentAction }).partial();

export const Instructions = z.strictObject({ role: z.array(str()).default([]), goal: z.array(str()).default([]), general: str().default('') });
const InstructionsPatch = z.strictObject({ role: z.array(str()), goal: z.array(str()), general: str() }).partial();

export const LlmCredentials = z.strictObject({ name: z.string().min(1), description: str().nullable().default(null), value: z.string().min(1) });

export const ConnectivityDetails = z.looseObject({
  custom_headers: stringMap().optional(),
  auth_type: str().optional(),
  api_key_header_name: str().nullable().optional(),
});

/** Why callers cannot write `orchestration_nodes` (create: any non-empty value; PATCH: any change, agent-writes.ts). */
export const ORCHESTRATION_NODES_MSG = 'orchestration_nodes are written by workflows only: link a workflow with POST /v1/workflows/{id}/agent, or call it through tools:[{type:"workflow"}]';

const typeField = z.enum(AGENT_TYPES).refine((t) => t !== 'orchestration', {
  message: "type 'orchestration' cannot be set on an agent; use workflows for orchestration",
});

/** Every accepted field with its type, no defaults. */
const BaseFields = {
  name: z.string().min(1).max(256),
  description: str().nullable(),
  icon: str().max(64).nullable(),
  avatar: str().nullable(),
  type: typeField,
  deployment_type: z.enum(DEPLOYMENT_TYPES).nullable(),
  framework: str().nullable(),
  origin_template: str().nullable(),
  environment_id: str().nullable(),
  created_by: str().nullable(),
  model_provider: z.enum(LLM_MODEL_PROVIDERS).nullable(),
  model_name: str().nullable(),
  llm_reasoning_effort: z.enum(REASONING_EFFORTS).nullable(),
  llm_api_base: z.url({ protocol: /^https?$/ }).nullable(),
  llm_credentials_key: str().nullable(),
  llm_credentials_key_type: z.enum(LLM_CREDENTIALS_KEY_TYPES).nullable(),
  llm_credentials: LlmCredentials.nullable(),
  llm_extra_headers: stringMap().nullable(),
  instructions: Instructions,
  expected_output: str().nullable(),
  output_format: z.enum(OUTPUT_FORMATS).nullable(),
  output_schema: outputSchema().nullable(),
  voice_id: str().nullable(),
  deep_planning: z.boolean().nullable(),
  enforce_deep_planning: z.boolean().nullable(),
  tools: z.array(ToolEntry),
  attached_tools: z.array(AttachedConnector),
  graph: z.array(GraphItemSchema),
  knowledge_bases: z.array(AgentKnowledgeBase),
  source_nodes: z.array(SourceNode),
  skills: z.array(SkillElement),
  prompts: z.array(str()),
  oas: jsonObject(),
  orchestration_nodes: z.array(z.unknown()),
  connectivity_details: ConnectivityDetails.nullable(),
  access_scope: z.enum(ACCESS_SCOPES),
  agno_settings: AgnoSettings,
  task_level_strategies: TaskLevelStrategies.nullable(),
  notification_settings: NotificationSettings.nullable(),
  using_nemo: z.boolean(),
  is_supervised: z.boolean(),
  is_autonomous: z.boolean(),
  is_omni: z.boolean(),
  discoverable: z.boolean(),
  with_auto_context_management: z.boolean(),
  developer_access: z.boolean(),
  should_stage_before_publish: z.boolean(),
  on_prem_event_streaming: z.boolean(),
  use_agent_gateway: z.boolean(),
  deletable: z.boolean(),
  use_oidc_pre_auth: z.boolean(),
  pre_auth_audiences: z.array(str()),
  use_oidc_pre_auth_token_for_llm: z.boolean(),
  oidc_pre_auth_token_llm_audience: str().nullable(),
  oidc_pre_auth_token_mcp_audience: str().nullable(),
  can_self_schedule: z.boolean(),
  max_self_schedules: z.number().int().min(1).max(1000),
  use_dynamic_tools: z.boolean(),
  workspace_tools_enabled: z.boolean(),
};
export const AGENT_CONFIG_FIELDS = Object.keys(BaseFields) as (keyof typeof BaseFields)[];

const F = BaseFields;
/**
 * `POST /v1/agents`. `model_name` and `created_by` have no schema default: the service fills them (catalog default of
 * the provider; the caller's key or JWT subject).
 */
export const CreateAgentBody = z.strictObject({
  name: F.name,
  description: F.description.default(''),
  icon: F.icon.default('\u{1F680}'),
  avatar: F.avatar.default('male-avatar'),
  type: F.type.default('manager'),
  deployment_type: F.deployment_type.default('serverless'),
  framework: F.framework.default('agno'),
  origin_template: F.origin_template.default(null),
  environment_id: F.environment_id.default(null),
  created_by: F.created_by.optional(),
  model_provider: F.model_provider.default(DEFAULT_MODEL_PROVIDER),
  model_name: F.model_name.optional(),
  llm_reasoning_effort: F.llm_reasoning_effort.default('medium'),
  llm_api_base: F.llm_api_base.default(null),
  llm_credentials_key: F.llm_credentials_key.default(null),
  llm_credentials_key_type: F.llm_credentials_key_type.default('xpander'),
  llm_credentials: F.llm_credentials.default(null),
  llm_extra_headers: F.llm_extra_headers.default({}),
  instructions: F.instructions.prefault({}),
  expected_output: F.expected_output.default(''),
  output_format: F.output_format.default('markdown'),
  output_schema: F.output_schema.default(null),
  voice_id: F.voice_id.default(null),
  deep_planning: F.deep_planning.default(false),
  enforce_deep_planning: F.enforce_deep_planning.default(false),
  tools: F.tools.default([]),
  attached_tools: F.attached_tools.default([]),
  graph: F.graph.default([]),
  knowledge_bases: F.knowledge_bases.default([]),
  source_nodes: F.source_nodes.default([]),
  skills: F.skills.default([]),
  prompts: F.prompts.default([]),
  oas: F.oas.default({}),
  // Written only by the workflows module (POST /v1/workflows/{id}/agent): a caller's would run unchecked or not at all.
  orchestration_nodes: F.orchestration_nodes.refine((n) => n.length === 0, ORCHESTRATION_NODES_MSG).default([]),
  connectivity_details: F.connectivity_details.default({}),
  access_scope: F.access_scope.default('personal'),
  agno_settings: F.agno_settings.prefault({}),
  task_level_strategies: F.task_level_strategies.default(null),
  notification_settings: F.notification_settings.default({}),
  using_nemo: F.using_nemo.default(false),
  is_supervised: F.is_supervised.default(false),
  is_autonomous: F.is_autonomous.default(false),
  is_omni: F.is_omni.default(false),
  discoverable: F.discoverable.default(true),
  with_auto_context_management: F.with_auto_context_management.default(true),
  developer_access: F.developer_access.default(true),
  should_stage_before_publish: F.should_stage_before_publish.default(true),
  on_prem_event_streaming: F.on_prem_event_streaming.default(true),
  use_agent_gateway: F.use_agent_gateway.default(false),
  deletable: F.deletable.default(true),
  use_oidc_pre_auth: F.use_oidc_pre_auth.default(false),
  pre_auth_audiences: F.pre_auth_audiences.default([]),
  use_oidc_pre_auth_token_for_llm: F.use_oidc_pre_auth_token_for_llm.default(false),
  oidc_pre_auth_token_llm_audience: F.oidc_pre_auth_token_llm_audience.default(null),
  oidc_pre_auth_token_mcp_audience: F.oidc_pre_auth_token_mcp_audience.default(null),
  can_self_schedule: F.can_self_schedule.default(false),
  max_self_schedules: F.max_self_schedules.default(3),
  use_dynamic_tools: F.use_dynamic_tools.default(false),
  workspace_tools_enabled: F.workspace_tools_enabled.default(true),
});
export type CreateAgentInput = z.output<typeof CreateAgentBody>;

/**
 * The stored configuration of one version: every create field filled (agents/agent-config.ts completes versions
 * stored before a field existed). `type` also takes 'orchestration', which only workflows set (never a caller).
 */
export type AgentConfig = Omit<CreateAgentInput, 'model_name' | 'created_by' | 'graph' | 'type'> & {
  type: (typeof AGENT_TYPES)[number];
  model_name: string | null;
  created_by: string | null;
  graph: GraphItem[];
};

/**
 * `PATCH /v1/agents/{id}`: any create field; `status` (ACTIVE/INACTIVE) is the one system field it takes.
 * `agno_settings` and `instructions` merge key by key; every other field replaces the stored value.
 */
export const PatchAgentBody = z
  .strictObject({ ...BaseFields, agno_settings: AgnoSettingsPatch, instructions: InstructionsPatch })
  .partial()
  .extend({ status: z.enum(AGENT_STATUSES).optional() });
export type PatchAgentInput = z.output<typeof PatchAgentBody>;

export const AgentIdParams = z.strictObject({ agent_id: id() });
export const AgentVersionParams = z.strictObject({ agent_id: id(), version: z.coerce.number().int().min(1) });
export const AgentToolParams = z.strictObject({ agent_id: id(), tool_id: id() });

/** For the OpenAPI document: the agent as returned. */
export const AgentView = z.object({
  id: z.string(),
  unique_name: z.string().nullable(),
  organization_id: z.string(),
  status: z.enum(AGENT_STATUSES),
  version: z.number().int(),
  has_pending_changes: z.boolean(),
  is_latest: z.boolean(),
  created_at: z.string().nullable(),
  webhook_url: z.string(),
  ...CreateAgentBody.shape,
});
export const AgentSummaryView = AgentView.pick({
  id: true,
  name: true,
  unique_name: true,
  description: true,
  icon: true,
  status: true,
  type: true,
  model_provider: true,
  model_name: true,
  created_at: true,
  has_pending_changes: true,
});
