import type { Task, TaskEvent } from '../tasks/task.types.js';

/**
 * Tasks and their events as xpander's Python SDK parses them (`Task`, `TasksListItem`, `TaskUpdateEvent` in
 * xpander_sdk/modules/tasks and models/events.py). `/v1` keeps the spec's shapes; docs/decisions.md says why each
 * field differs here.
 */

/** `TaskUpdateEventType` of the SDK: an event of another type (Agentry's `llm_call`) is left out of its stream. */
const SDK_EVENT_TYPES: ReadonlySet<string> = new Set([
  'task_created', 'task_updated', 'task_finished', 'chunk', 'auth_event', 'tool_call_request', 'tool_call_result',
  'sub_agent_trigger', 'think', 'analyze', 'plan_updated', 'task_compactization',
]);

export function presentXpanderTask(t: Task): Record<string, unknown> {
  const user = t.input.user;
  return {
    id: t.id,
    agent_id: t.agent_id,
    organization_id: t.organization_id,
    input: {
      text: t.input.text,
      // The SDK's input.files is a list of URLs.
      files: t.input.files.map((f) => f.url),
      // `User.email` is a required string in the SDK; a user given without one has the empty string.
      user: user ? { id: user.id ?? null, first_name: user.first_name ?? null, last_name: user.last_name ?? null, email: user.email ?? '' } : null,
    },
    status: t.status,
    // A string in the SDK ("1"); `draft` stays `draft`.
    agent_version: String(t.agent_version),
    created_at: t.created_at,
    started_at: t.started_at,
    finished_at: t.finished_at,
    result: t.result,
    parent_execution: t.parent_execution,
    sub_executions: t.sub_executions,
    is_manually_stopped: t.is_manually_stopped,
    source: t.source,
    output_format: t.output_format,
    output_schema: t.output_schema,
    // Agentry streams every task's events: the SDK reads the stream only when this is true.
    events_streaming: true,
    additional_context: t.additional_context,
    title: t.title,
    execution_attempts: t.execution_attempts,
    tokens: { prompt_tokens: t.tokens.prompt_tokens, completion_tokens: t.tokens.completion_tokens, total_tokens: t.tokens.total_tokens },
    user_id: t.user_id,
    llm_model_provider: t.llm_model_provider,
    llm_model_name: t.llm_model_name,
    // The SDK's HumanInTheLoopRequest names a graph wait node, which Agentry's approvals do not have: the pending
    // approval is read with GET /v1/tasks/{id} (`hitl_request`); status `paused` says one is waiting.
    hitl_request: null,
  };
}

/** `TasksListItem` of the history routes. */
export function presentXpanderTaskListItem(t: Task): Record<string, unknown> {
  return {
    id: t.id,
    agent_id: t.agent_id,
    user_id: t.user_id,
    parent_task_id: t.parent_execution,
    triggering_agent_id: null,
    organization_id: t.organization_id,
    status: t.status,
    created_at: t.created_at,
    updated_at: t.finished_at ?? t.started_at ?? t.created_at,
    source_node_type: t.source,
    result: t.result,
    title: t.title,
  };
}

/** One event of the SDK's stream, or undefined when the SDK has no type for it. */
export function presentXpanderEvent(e: TaskEvent): Record<string, unknown> | undefined {
  // Deep planning's `plan` events are the SDK's `plan_updated`, carrying its DeepPlanning model.
  if (e.type === 'plan') return { type: 'plan_updated', task_id: e.task_id, organization_id: e.organization_id, time: e.time, data: presentDeepPlanning(e.data) };
  if (!SDK_EVENT_TYPES.has(e.type)) return undefined;
  return { type: e.type, task_id: e.task_id, organization_id: e.organization_id, time: e.time, data: eventData(e) };
}

function eventData(e: TaskEvent): unknown {
  const d = e.data;
  if (e.type.startsWith('task_')) return presentXpanderTask(d as unknown as Task);
  if (e.type === 'chunk') return typeof d.text === 'string' ? d.text : '';
  if (e.type === 'tool_call_request' || e.type === 'tool_call_result') {
    // ToolCallRequest/ToolCallResult: request_id and operation_id are required strings.
    const out: Record<string, unknown> = {
      request_id: String(d.tool_call_id ?? ''),
      operation_id: String(d.tool_name ?? ''),
      tool_call_id: d.tool_call_id ?? null,
      graph_node_id: d.graph_item_id ?? null,
      tool_name: d.tool_name ?? null,
      payload: d.payload ?? null,
    };
    if (e.type === 'tool_call_result') Object.assign(out, { result: d.result ?? null, is_error: d.is_error === true });
    return out;
  }
  return d;
}

/**
 * The SDK's `DeepPlanning` (xpander_sdk/models/deep_planning.py: enabled, enforce, started, question_raised, tasks of
 * {id, title, completed}) from a `plan` event (src/runtime/planning.ts). Failed and skipped steps are not completed.
 */
export function presentDeepPlanning(data: Record<string, unknown>): Record<string, unknown> {
  const plan = (data.plan && typeof data.plan === 'object' ? data.plan : {}) as { steps?: { id: number; title: string; status: string }[] };
  const steps = Array.isArray(plan.steps) ? plan.steps : [];
  return {
    enabled: true,
    enforce: data.enforce === true,
    started: steps.length > 0,
    question_raised: false,
    tasks: steps.map((s) => ({ id: String(s.id), title: s.title, completed: s.status === 'completed' })),
  };
}
