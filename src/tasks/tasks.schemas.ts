import { z } from 'zod';
import { PageQuery } from '../http/router.js';
import { newId } from '../lib/ids.js';
import { outputSchema, taskOutputFormat } from '../agents/agent.schemas.js';
import { isValidTaskId, TASK_ID_RULE } from './task-ids.js';
import { TASK_SOURCES, TASK_STATUSES, type TaskFile } from './task.types.js';


/** A file given by URL at invocation: the agent receives the URL; nothing is fetched or stored here. */
export const FileUrl = z.url({ protocol: /^https?$/ }).transform((url, ctx): TaskFile => {
  let name: string;
  try {
    name = decodeURIComponent(new URL(url).pathname.split('/').pop() || 'file');
  } catch {
    // A malformed `%` escape (issue 20: it answered 500): the caller's mistake, named by the issue's path.
    ctx.issues.push({ code: 'custom', message: 'Invalid percent-encoding in the file URL', input: url });
    return z.NEVER;
  }
  return { id: newId(), name, mime_type: 'application/octet-stream', size: 0, url };
});

/**
 * Body of POST /v1/agents/{id}/invoke[/async|/stream] (docs/contract.md#invoke). Unknown top-level fields are ignored
 * rather than refused: xpander SDK clients send options this service does not implement.
 */
export const InvokeBody = z.object({
  input: z.object({
    text: z.string().default(''),
    files: z.array(FileUrl).default([]),
    user: z
      .object({
        id: z.string().nullish(),
        email: z.string().nullish(),
        first_name: z.string().nullish(),
        last_name: z.string().nullish(),
      })
      .nullish(),
  }),
  id: z.string().refine(isValidTaskId, TASK_ID_RULE).nullish(),
  additional_context: z.string().nullish(),
  expected_output: z.string().nullish(),
  instructions_override: z.string().nullish(),
  // 'voice' is in the enum (spec 2.2) but there is no speech synthesis: refused, as on the agent.
  output_format: taskOutputFormat().nullish(),
  output_schema: outputSchema().nullish(),
  /** OAuth access tokens of the agent's oauth2 MCP servers, keyed by graph item id; sealed with the task, wiped when it ends. */
  user_tokens: z.record(z.string().min(1).max(256), z.string().min(1).max(16_384)).nullish(),
  /** Keep the uploaded files' extracted text out of the prompt; their URLs are given either way (spec 4.5). */
  disable_attachment_injection: z.boolean().nullish(),
});
export type InvokeBody = z.output<typeof InvokeBody>;

export const InvokeQuery = z.object({
  version: z.union([z.literal('draft'), z.coerce.number().int().min(1)]).optional(),
});

export const AgentIdParams = z.object({ agent_id: z.string().min(1) });
export const TaskIdParams = z.object({ task_id: z.string().min(1) });

/** An ISO 8601 date-time, or a date (YYYY-MM-DD: its whole day in UTC, so `to_date` includes that day). */
const dateBound = (end: boolean) =>
  z.string().transform((v, ctx) => {
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(v);
    const ms = Date.parse(dateOnly ? `${v}T00:00:00Z` : v);
    if (!Number.isFinite(ms)) {
      ctx.addIssue({ code: 'custom', message: 'Input should be a valid datetime or date' });
      return z.NEVER;
    }
    return dateOnly && end ? ms + 86_400_000 - 1 : ms;
  });

export const TaskListQuery = PageQuery.extend({
  agent_id: z.string().min(1).optional(),
  status: z.enum(TASK_STATUSES).optional(),
  user_id: z.string().min(1).optional(),
  source: z.enum(TASK_SOURCES).optional(),
  from_date: dateBound(false).optional(),
  to_date: dateBound(true).optional(),
  /** Text search over input, title and result (src/tasks/task-text-search.ts). */
  q: z.string().trim().min(1).max(200).optional().describe('Text the task\'s input, title or result contains (case-insensitive; literal, no wildcards). Searches the newest 5000 tasks that pass the other filters: narrow by agent or dates to reach older ones.'),
});
export const AgentTaskListQuery = TaskListQuery.omit({ agent_id: true });
