import { parseJson } from '../db/database.js';
import { isoOrNull, isoTime } from '../lib/clock.js';
import type { ThreadMessage } from '../runtime/task-runner.js';
import type { HitlRequest, Task, TaskEvent, TaskEventType, TaskFile, TaskSource, TaskStatus, TaskUser } from './task.types.js';
import type { TaskEventRow, TaskMessageRow, TaskRow } from './tasks.repository.js';

/** Row -> the task the API shows (docs/contract.md#task-shape). Pure: sub-executions are looked up by the caller. */
export function presentTask(r: TaskRow, subExecutions: string[] = []): Task {
  const hitl = parseJson<Omit<HitlRequest, 'requested_at'> & { requested_at: number } | null>(r.hitl_request, null);
  return {
    id: r.id,
    agent_id: r.agent_id,
    organization_id: r.organization_id,
    agent_version: r.agent_version === 'draft' ? 'draft' : Number(r.agent_version),
    input: {
      text: r.input_text,
      files: parseJson<TaskFile[]>(r.input_files, []),
      user: parseJson<TaskUser | null>(r.input_user, null),
    },
    status: r.status as TaskStatus,
    source: r.source as TaskSource,
    created_at: isoTime(Number(r.created_at)),
    started_at: isoOrNull(r.started_at),
    finished_at: isoOrNull(r.finished_at),
    result: r.result,
    execution_attempts: Number(r.execution_attempts),
    parent_execution: r.parent_execution,
    call_depth: Number(r.call_depth ?? 0),
    sub_executions: subExecutions,
    is_manually_stopped: Number(r.is_manually_stopped) === 1,
    additional_context: r.additional_context,
    output_format: r.output_format,
    output_schema: parseJson<Record<string, unknown> | null>(r.output_schema, null),
    tokens: {
      prompt_tokens: Number(r.prompt_tokens),
      completion_tokens: Number(r.completion_tokens),
      total_tokens: Number(r.total_tokens),
    },
    llm_model_provider: r.llm_model_provider,
    llm_model_name: r.llm_model_name,
    title: r.title,
    user_id: r.user_id,
    schedule_id: r.schedule_id ?? null,
    hitl_request: hitl && r.status === 'paused' ? { tool: hitl.tool, arguments: hitl.arguments, requested_at: isoTime(hitl.requested_at) } : null,
  };
}

export function presentEvent(r: TaskEventRow): TaskEvent & { seq: number } {
  return {
    seq: Number(r.seq),
    type: r.type as TaskEventType,
    task_id: r.task_id,
    organization_id: r.organization_id,
    time: isoTime(Number(r.time)),
    data: parseJson<Record<string, unknown>>(r.data, {}),
  };
}

export function presentMessage(r: TaskMessageRow): ThreadMessage {
  const m: ThreadMessage = { role: r.role as ThreadMessage['role'], content: r.content, created_at: isoTime(Number(r.created_at)), run: Number(r.run) };
  const calls = parseJson<ThreadMessage['tool_calls'] | null>(r.tool_calls, null);
  if (calls) m.tool_calls = calls;
  if (r.tool_call_id) m.tool_call_id = r.tool_call_id;
  return m;
}

/** A trace row for the repositories: the envelope's `data` as JSON text. */
export function eventRow(row: Pick<TaskRow, 'organization_id' | 'id'>, type: TaskEventType, time: number, data: unknown) {
  return { organization_id: row.organization_id, task_id: row.id, type, time, data: JSON.stringify(data) };
}

/** ISO time -> epoch ms for storage; messages from the runner carry ISO times. */
export function parseTimeMs(iso: string | undefined, fallback: number): number {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : fallback;
}
