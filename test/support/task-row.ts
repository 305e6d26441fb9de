import { newTaskRow } from '../../src/tasks/task-rows.js';
import type { TaskSubmission } from '../../src/tasks/task.types.js';
import type { ContinuationFields, TaskRow } from '../../src/tasks/tasks.repository.js';

/** What a plain webhook submission stores beside its text: no files, user, overrides or parent. */
const FIELDS = {
  agent_version: '1', source: 'webhook', input_text: 'hi', input_files: '[]', input_user: null, user_id: null, additional_context: null, expected_output: null,
  instructions_override: null, output_format: null, output_schema: null, disable_attachment_injection: 0, sealed_user_tokens: null, max_attempts: 3,
  parent_execution: null, call_depth: 0, callback_url: null,
} as unknown as ContinuationFields;

/** A new pending task of organization `org` and agent `agent`, as a submission builds it, for tests of the data layer. */
export function pendingTaskRow(id: string, now: number): TaskRow {
  return newTaskRow({ organizationId: 'org', agentId: 'agent', text: 'hi', source: 'webhook' } as TaskSubmission, id, FIELDS, now);
}
