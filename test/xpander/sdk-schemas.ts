import { Ajv, type ValidateFunction } from 'ajv';

/**
 * JSON Schemas transcribed from the Pydantic models of xpander's Python SDK (xpander-ai/xpander-sdk, src/xpander_sdk:
 * modules/agents/models/agent.py + sub_modules/agent.py `Agent`, agent_list.py `AgentsListItem`,
 * tools_repository/sub_modules/tool.py `Tool`, modules/tasks/sub_modules/task.py `Task` + `TaskUpdateEvent`,
 * tasks/models/tasks_list.py `TasksListItem`, models/events.py `ToolCallRequest`/`ToolCallResult`,
 * knowledge_bases/... `KnowledgeBase`, `KnowledgeBaseDocumentItem`, `KnowledgeBaseSearchResult`).
 *
 * Pydantic v2's rules carried over: `Optional[X]` accepts null, a field without a default is required, a
 * `str = None` field (Agent.environment_id) may be absent but not null, extra fields are ignored, `str` does not
 * accept numbers, `datetime` is an ISO 8601 string, enums are closed.
 */

const str = { type: 'string' };
const int = { type: 'integer' };
const bool = { type: 'boolean' };
const num = { type: 'number' };
const obj = { type: 'object' };
const dateTime = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:?\\d{2})$' };
const opt = (s: object) => ({ anyOf: [s, { type: 'null' }] });
const arr = (items: object) => ({ type: 'array', items });
const en = (...values: string[]) => ({ enum: values });
const model = (required: string[], properties: Record<string, object>) => ({ type: 'object', required, properties });

// ---- enums
const AgentStatus = en('DRAFT', 'ACTIVE', 'INACTIVE');
const AgentAccessScope = en('personal', 'organizational');
const AgentType = en('manager', 'regular', 'a2a', 'curl', 'orchestration');
const AgentDeploymentType = en('serverless', 'container');
const Framework = en('agno', 'google-adk', 'langchain', 'open-ai-agents', 'strands-agents', 'open-claw');
const SourceNodeType = en('workbench', 'sdk', 'task', 'assistant', 'webhook', 'mcp', 'a2a', 'telegram', 'slack');
const AgentGraphItemType = en('source_node', 'agent', 'tool', 'human_in_the_loop', 'xpsleep-agent-delay', 'custom_agent', 'storage', 'coding_agent', 'mcp');
const AgentGraphItemSubType = en('sdk', 'task', 'assistant', 'webhook', 'operation', 'custom_function', 'local_tool');
const LLMReasoningEffort = en('low', 'medium', 'high');
const OutputFormat = en('text', 'markdown', 'json', 'voice');
const AgentExecutionStatus = en('pending', 'executing', 'paused', 'error', 'failed', 'completed', 'stopped');
const ThinkMode = en('default', 'harder');
const TaskUpdateEventType = en(
  'task_created', 'task_updated', 'task_finished', 'chunk', 'auth_event', 'tool_call_request', 'tool_call_result',
  'sub_agent_trigger', 'think', 'analyze', 'plan_updated', 'task_compactization',
);
const KnowledgeBaseType = en('managed', 'external');

// ---- agents
const AgentInstructions = model([], { role: arr(str), goal: arr(str), general: str });

const MCPServerDetails = model([], {
  type: opt(en('local', 'remote')),
  name: opt(str),
  command: opt(str),
  url: opt(str),
  transport: opt(en('stdio', 'sse', 'streamable-http')),
  auth_type: opt(en('api_key', 'oauth2', 'custom_headers', 'none')),
  api_key: opt(str),
  headers: opt(obj),
  allowed_tools: opt(arr(str)),
});

const AgentGraphItem = model(['item_id', 'type', 'targets'], {
  id: opt(str),
  item_id: str,
  name: opt(str),
  type: AgentGraphItemType,
  sub_type: opt(AgentGraphItemSubType),
  targets: arr(str),
  settings: opt(model([], { instructions: opt(str), description: opt(str), schemas: opt(model([], { input: opt(obj), output: opt(obj) })), mcp_settings: opt(MCPServerDetails) })),
  llm_settings: opt(arr(obj)),
  is_first: opt(bool),
});

export const ToolSchema = model(['id', 'name', 'method', 'path'], {
  id: str,
  name: str,
  method: str,
  path: str,
  should_add_to_graph: opt(bool),
  is_local: opt(bool),
  is_standalone: opt(bool),
  description: str,
  parameters: obj,
  connector_id: opt(str),
  operation_id: opt(str),
});

const AgnoSettings = model([], {
  session_storage: opt(bool),
  learning: opt(bool),
  user_memories: opt(bool),
  agentic_memory: opt(bool),
  agent_memories: opt(bool),
  agentic_culture: opt(bool),
  session_summaries: opt(bool),
  num_history_runs: opt(int),
  max_tool_calls_from_history: opt(int),
  tool_call_limit: opt(int),
  coordinate_mode: opt(bool),
  pii_detection_enabled: opt(bool),
  pii_detection_mask: opt(bool),
  prompt_injection_detection_enabled: opt(bool),
  openai_moderation_enabled: opt(bool),
  openai_moderation_categories: opt(arr(str)),
  reasoning_tools_enabled: opt(bool),
  tool_calls_compression: opt(model([], { enabled: opt(bool), threshold: opt(int), instructions: opt(str) })),
});

export const AgentSchema = model(['id', 'organization_id', 'name', 'unique_name', 'framework', 'model_provider', 'model_name'], {
  id: str,
  organization_id: str,
  name: str,
  description: opt(str),
  unique_name: str,
  origin_template: opt(str),
  environment_id: str,
  tools: opt(arr(ToolSchema)),
  icon: opt(str),
  connectivity_details: opt(obj),
  deployment_type: opt(AgentDeploymentType),
  source_nodes: opt(arr(model(['type'], { id: opt(str), type: SourceNodeType, targets: opt(arr(str)), metadata: opt(obj) }))),
  access_scope: opt(AgentAccessScope),
  instructions: opt(AgentInstructions),
  framework: Framework,
  graph: opt(arr(AgentGraphItem)),
  status: opt(AgentStatus),
  knowledge_bases: opt(arr(model(['id'], { id: str, rw: opt(bool) }))),
  version: opt(int),
  created_by: opt(str),
  using_nemo: opt(bool),
  model_provider: str,
  model_name: str,
  llm_reasoning_effort: opt(LLMReasoningEffort),
  deep_planning: opt(bool),
  enforce_deep_planning: opt(bool),
  llm_api_base: opt(str),
  llm_extra_headers: opt({ type: 'object', additionalProperties: str }),
  webhook_url: opt(str),
  created_at: opt(dateTime),
  type: opt(AgentType),
  output_format: opt(OutputFormat),
  voice_id: opt(str),
  output_schema: opt(obj),
  llm_credentials: opt(model(['name', 'value'], { name: str, description: opt(str), value: str })),
  expected_output: opt(str),
  agno_settings: opt(AgnoSettings),
  orchestration_nodes: opt(arr(obj)),
  notification_settings: opt(obj),
  task_level_strategies: opt(obj),
  use_oidc_pre_auth: opt(bool),
  pre_auth_audiences: opt(arr(str)),
  use_oidc_pre_auth_token_for_llm: opt(bool),
  oidc_pre_auth_token_llm_audience: opt(str),
  oidc_pre_auth_token_mcp_audience: opt(str),
});

export const AgentsListItemSchema = model(['id', 'name', 'icon', 'instructions', 'status', 'organization_id', 'created_at'], {
  id: str,
  name: str,
  icon: str,
  instructions: AgentInstructions,
  status: AgentStatus,
  organization_id: str,
  created_at: dateTime,
  description: opt(str),
  access_scope: opt(AgentAccessScope),
  created_by: opt(str),
  type: opt(AgentType),
});

/**
 * `ToolsRepository.aload_tool_by_id` builds `Tool(**tool, method='POST', path='tool', is_standalone=True,
 * connector_id=..., operation_id=...)`: the answer must not carry those keys (a duplicate keyword is a TypeError).
 */
export const StandaloneToolSchema = {
  type: 'object',
  required: ['id', 'name'],
  properties: { id: str, name: str, description: str, parameters: obj },
  not: { anyOf: ['method', 'path', 'is_standalone', 'connector_id', 'operation_id', 'configuration'].map((k) => ({ required: [k] })) },
};

// ---- tasks
const User = model(['email'], { id: opt(str), first_name: opt(str), last_name: opt(str), email: str, additional_attributes: opt(obj), timezone: opt(str) });
const Tokens = model([], { completion_tokens: opt(int), prompt_tokens: opt(int) });

export const TaskSchema = model(['id', 'agent_id', 'organization_id', 'input', 'created_at'], {
  id: str,
  agent_id: str,
  organization_id: str,
  input: model([], { text: opt(str), files: opt(arr(str)), user: opt(User) }),
  status: opt(AgentExecutionStatus),
  internal_status: opt(str),
  last_executed_node_id: opt(str),
  agent_version: opt(str),
  created_at: dateTime,
  started_at: opt(dateTime),
  paused_at: opt(dateTime),
  finished_at: opt(dateTime),
  result: opt(str),
  parent_execution: opt(str),
  sub_executions: opt(arr(str)),
  is_manually_stopped: opt(bool),
  payload_extension: opt(obj),
  hitl_request: opt(model(['wait_node_id'], { wait_node_id: str })),
  pending_eca_request: opt(model(['connector_name', 'auth_url'], { connector_name: str, auth_url: str })),
  source: opt(str),
  voice_id: opt(str),
  output_format: opt(OutputFormat),
  output_schema: opt(obj),
  events_streaming: opt(bool),
  is_orchestration: opt(bool),
  additional_context: opt(str),
  instructions_override: opt(str),
  test_run_node_id: opt(str),
  user_oidc_token: opt(str),
  expected_output: opt(str),
  mcp_servers: opt(arr(MCPServerDetails)),
  triggering_agent_id: opt(str),
  title: opt(str),
  think_mode: opt(ThinkMode),
  disable_attachment_injection: opt(bool),
  user_tokens: opt(obj),
  deep_planning: opt(obj),
  execution_attempts: opt(int),
  return_metrics: opt(bool),
  tokens: opt(Tokens),
  used_tools: opt(arr(str)),
  duration: opt(num),
});

export const TasksListItemSchema = model(['id', 'agent_id', 'organization_id', 'status'], {
  id: str,
  agent_id: str,
  user_id: opt(str),
  parent_task_id: opt(str),
  triggering_agent_id: opt(str),
  organization_id: str,
  status: AgentExecutionStatus,
  created_at: opt(dateTime),
  updated_at: opt(dateTime),
  source_node_type: opt(str),
  result: opt(str),
  title: opt(str),
});

const ToolCallRequest = model(['request_id', 'operation_id'], {
  request_id: str,
  operation_id: str,
  tool_call_id: opt(str),
  graph_node_id: opt(str),
  tool_name: opt(str),
  payload: {},
  reasoning: opt(model([], { title: opt(str), description: opt(str) })),
});
const ToolCallResult = { ...ToolCallRequest, properties: { ...ToolCallRequest.properties, result: {}, is_error: opt(bool) } };

/**
 * `TaskUpdateEvent` (type, task_id, organization_id, time, data: Any). `Task.aevents` parses `data` of `task*` events
 * as a Task; `data` of tool-call events is read as ToolCallRequest/ToolCallResult by consumers.
 */
export const TaskUpdateEventSchema = {
  ...model(['type', 'task_id', 'organization_id', 'time', 'data'], { type: TaskUpdateEventType, task_id: str, organization_id: str, time: dateTime, data: {} }),
  allOf: [
    { if: { properties: { type: { enum: ['task_created', 'task_updated', 'task_finished'] } } }, then: { properties: { data: TaskSchema } } },
    { if: { properties: { type: { const: 'tool_call_request' } } }, then: { properties: { data: ToolCallRequest } } },
    { if: { properties: { type: { const: 'tool_call_result' } } }, then: { properties: { data: ToolCallResult } } },
  ],
};

// ---- knowledge bases
export const KnowledgeBaseSchema = model(['id', 'name', 'type', 'organization_id'], {
  id: str,
  name: str,
  description: opt(str),
  type: KnowledgeBaseType,
  organization_id: str,
  total_documents: int,
});
export const KnowledgeBaseDocumentItemSchema = model(['document_url'], { kb_id: opt(str), id: opt(str), document_url: str, raw_data: opt(str) });
export const KnowledgeBaseSearchResultSchema = model(['content', 'score'], { content: str, score: num });

const ajv = new Ajv({ allErrors: true, strict: false });
const cache = new Map<object, ValidateFunction>();

/** Validates `value` against a schema above; returns Ajv's errors as text ('' when valid). */
export function schemaErrors(schema: object, value: unknown): string {
  const v = cache.get(schema) ?? ajv.compile(schema);
  cache.set(schema, v);
  return v(value) ? '' : ajv.errorsText(v.errors, { separator: '\n' });
}

export const listOf = (schema: object) => ({ type: 'array', items: schema });
