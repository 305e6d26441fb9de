import { z } from 'zod';
import { CreateAgentBody, outputSchema, PatchAgentBody, taskOutputFormat } from '../agents/agent.schemas.js';
import { isValidTaskId, TASK_ID_RULE } from '../tasks/task-ids.js';
import { FileUrl } from '../tasks/tasks.schemas.js';
import { TASK_STATUSES } from '../tasks/task.types.js';

/**
 * Bodies and queries of xpander's internal routes exactly as its Python SDK and TypeScript CLI send them (facts read
 * from their public source). The SDK sends every option on every call, mostly as null: a field Agentry cannot honour
 * is refused with 422 only when it asks for something: a setting is never stored and silently ignored
 * (docs/decisions.md#settings-that-must-act-or-are-refused).
 */

const unsupported = (what: string) => `${what} is not supported by Agentry`;

/** A `source` label as the SDK sends it (`sdk`, `workbench`, ...): kept as sent on the task. */
const SourceLabel = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'Input should be a lowercase label of at most 32 characters');

/** Must be absent, null, false or empty (an empty query value too): the SDK's defaults. */
const off = (what: string) =>
  z
    .unknown()
    .optional()
    .superRefine((v, ctx) => {
      const empty = v === undefined || v === null || v === false || v === '' || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);
      if (!empty) ctx.addIssue({ code: 'custom', message: `Value error, ${unsupported(what)}` });
    });

const SdkUser = z.object({
  id: z.string().nullish(),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  email: z.string().nullish(),
  additional_attributes: off('user.additional_attributes'),
  timezone: off('user.timezone'),
});

/** POST /agent-execution/{agent_id}: the payload of the SDK's `Agent.acreate_task` / `Tasks.acreate`. */
export const CreateExecutionBody = z.object({
  id: z.string().refine(isValidTaskId, TASK_ID_RULE).nullish(),
  input: z.object({
    text: z.string().nullish(),
    files: z.array(FileUrl).nullish(),
    user: SdkUser.nullish(),
  }),
  source: SourceLabel.nullish(),
  output_format: taskOutputFormat().nullish(),
  output_schema: outputSchema().nullish(),
  additional_context: z.string().nullish(),
  instructions_override: z.string().nullish(),
  expected_output: z.string().nullish(),
  disable_attachment_injection: z.boolean().nullish(),
  user_tokens: z.record(z.string(), z.string()).nullish(),
  // Every task's events stream (GET /{org}/agent-execution/{id}/events), so either value holds.
  events_streaming: z.boolean().nullish(),
  think_mode: z.enum(['default']).nullish().describe("Only 'default': Agentry has no 'harder' mode"),
  payload_extension: off('payload_extension'),
  worker_id: off('worker_id'),
  run_locally: off('run_locally (tasks run in Agentry\'s workers)'),
  test_run_node_id: off('test_run_node_id'),
  user_oidc_token: off('user_oidc_token'),
  mcp_servers: off('mcp_servers on a task (attach MCP servers to the agent)'),
  triggering_agent_id: off('triggering_agent_id'),
  title: off('title (Agentry titles a task from its input)'),
  return_metrics: off('return_metrics'),
});
export type CreateExecutionBody = z.output<typeof CreateExecutionBody>;

/** POST /agent-execution/{agent_id}/report_task: the SDK's `Task.areport_external_task` (TaskReportRequest). */
export const ReportTaskBody = z.object({
  id: z.string().refine(isValidTaskId, TASK_ID_RULE).nullish(),
  input: z.string().max(1_000_000).nullish(),
  /** The raw model response, kept on the task's trace (up to 64 KB of JSON). */
  llm_response: z.unknown().optional(),
  tokens: z.object({ prompt_tokens: z.number().int().min(0).default(0), completion_tokens: z.number().int().min(0).default(0) }).nullish(),
  is_success: z.boolean().nullish(),
  result: z.string().max(10_000_000).nullish(),
  /** Seconds, as the SDK measures them. */
  duration: z.number().min(0).max(31_536_000).nullish(),
  used_tools: z.array(z.string().max(256)).max(1000).nullish(),
});
export type ReportTaskBody = z.output<typeof ReportTaskBody>;

/**
 * PATCH /agent-execution/{task_id}/update: the SDK sends its whole Task model (`Task.asave`) or the fields of
 * `Tasks.aupdate`. Only the fields a change could be asked in are read; see XpanderTasks.update.
 */
export const UpdateExecutionBody = z.looseObject({
  status: z.enum(TASK_STATUSES).nullish(),
  result: z.string().nullish(),
  source: z.string().nullish(),
  last_executed_node_id: z.string().nullish(),
  tool_call_payload_extension: z.record(z.string(), z.unknown()).nullish(),
  payload_extension: z.record(z.string(), z.unknown()).nullish(),
  tokens: z.looseObject({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() }).nullish(),
});
export type UpdateExecutionBody = z.output<typeof UpdateExecutionBody>;

/** The history routes: the filters `Tasks.alist(filters=...)` passes, plus paging. */
export const HistoryQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  per_page: z.coerce.number().int().min(1).max(50).default(50),
  user_id: z.string().min(1).optional(),
  parent_task_id: z.string().min(1).optional(),
  status: z.enum(TASK_STATUSES).optional(),
  triggering_agent_id: off('the triggering_agent_id filter'),
  internal_status: off('the internal_status filter'),
});
export type HistoryQuery = z.output<typeof HistoryQuery>;

export const AgentIdParams = z.object({ agent_id: z.string().min(1) });
export const TaskIdParams = z.object({ task_id: z.string().min(1) });
export const UserIdParams = z.object({ user_id: z.string().min(1) });
export const OrgTaskParams = z.object({ organization_id: z.string().min(1), task_id: z.string().min(1) });


// ---- the CLI's agent CRUD (/agents-crud/tools/crud/*): bodies carry agent_id and organization_id

const OrgField = { organization_id: z.string().nullish() };

export const CrudCreateBody = CreateAgentBody.extend(OrgField);
export type CrudCreateBody = z.output<typeof CrudCreateBody>;

/** The CLI edits `instructions.role`/`goal` as single strings; the agent stores lists of lines. */
function instructionLists(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  const body = v as Record<string, unknown>;
  const ins = body.instructions;
  if (!ins || typeof ins !== 'object' || Array.isArray(ins)) return v;
  const next = { ...(ins as Record<string, unknown>) };
  for (const k of ['role', 'goal']) if (typeof next[k] === 'string') next[k] = next[k] === '' ? [] : [next[k]];
  return { ...body, instructions: next };
}

export const CrudUpdateBody = z.preprocess(instructionLists, PatchAgentBody.extend({ agent_id: z.string().min(1), ...OrgField }));
export type CrudUpdateBody = z.output<typeof CrudUpdateBody>;

export const CrudAgentRef = z.strictObject({ agent_id: z.string().min(1), ...OrgField });

export const SearchInterfacesBody = z.object({ search_phrase: z.string().max(500).nullish(), list_mode: z.boolean().nullish() });
export const SearchOperationsBody = z.object({
  interfaces: z.array(z.object({ type: z.string().nullish(), asset_id: z.string().min(1) })).min(1).max(50),
  search_phrases: z.array(z.string().max(500)).max(20).nullish(),
  list_mode: z.boolean().nullish(),
});

// ---- knowledge bases (/knowledge_bases/...)

export const KbIdParams = z.object({ kb_id: z.string().min(1) });
export const KbCreateBody = z.object({ name: z.string().min(1).max(256), description: z.string().max(10_000).nullish() });
/** The SDK's `add_documents`: `[{document_url, sync}]`; `sync` true waits for indexing, which Agentry does not do. */
export const KbAddDocumentsBody = z
  .array(z.object({ document_url: z.url({ protocol: /^https?$/ }), sync: off('sync (indexing is asynchronous; poll the documents list)') }))
  .min(1)
  .max(100);
export const KbDeleteDocumentsBody = z.array(z.string().min(1)).min(1).max(100);
export const KbSearchQuery = z.object({
  search_query: z.string().min(1).max(2000),
  top_k: z.coerce.number().int().min(1).max(50).default(10),
  // Bubbles (neighbouring text around a hit) are not implemented: false, or absent.
  use_bubble: z.enum(['false', 'False']).optional(),
  bubble_size: z.coerce.number().int().min(0).optional(),
});
