import type { TaskEvent, TaskSubmission } from './task.types.js';
import type { ContinuationFields, TaskRow } from './tasks.repository.js';

/** A task's title: its input's first line, at most this many characters. */
const TITLE_CHARS = 80;

/**
 * A new task's row. One literal with every column (no spread): an object built by spreading and then adding
 * 29 more keys goes to V8's slow dictionary mode, which showed in the accept profile.
 */
export function newTaskRow(s: TaskSubmission, id: string, f: ContinuationFields, now: number): TaskRow {
  return {
    organization_id: s.organizationId,
    id,
    agent_id: s.agentId,
    agent_version: f.agent_version,
    status: 'pending',
    source: f.source,
    input_text: f.input_text,
    input_files: f.input_files,
    input_user: f.input_user,
    user_id: f.user_id,
    title: titleOf(s.text),
    result: null,
    additional_context: f.additional_context,
    expected_output: f.expected_output,
    instructions_override: f.instructions_override,
    output_format: f.output_format,
    output_schema: f.output_schema,
    disable_attachment_injection: f.disable_attachment_injection,
    sealed_user_tokens: f.sealed_user_tokens,
    parent_execution: f.parent_execution,
    call_depth: f.call_depth,
    callback_url: f.callback_url,
    is_manually_stopped: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    llm_model_provider: null,
    llm_model_name: null,
    run: 1,
    execution_attempts: 0,
    max_attempts: f.max_attempts,
    fence: 0,
    lease_owner: null,
    lease_expires_at: null,
    heartbeat_at: null,
    queued_at: now,
    // Given as it enters the queue (task-fair-ranks.repository.ts): the inbox's move, or the insert.
    fair_rank: null,
    hitl_request: null,
    hitl_decision: null,
    created_at: now,
    updated_at: now,
    started_at: null,
    finished_at: null,
    schedule_id: s.scheduleId ?? null,
    // Decided where the row is written (task-payloads.repository.ts).
    payload_stored: 0,
  };
}

export function withoutSeq(e: TaskEvent & { seq: number }): TaskEvent {
  const { seq: _seq, ...rest } = e;
  return rest;
}

function titleOf(text: string): string | null {
  const nl = text.indexOf('\n', text.length - text.trimStart().length);
  const line = (nl < 0 ? text : text.slice(0, nl)).trim();
  if (!line) return null;
  // Code units bound code points from above: a short line needs no splitting into characters.
  if (line.length <= TITLE_CHARS) return line;
  const chars = [...line];
  return chars.length > TITLE_CHARS ? chars.slice(0, TITLE_CHARS - 1).join('') + '…' : line;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

export function jsonOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : JSON.stringify(v);
}
