import type { DedupSource } from './task-dedup.js';
import type { Principal } from '../auth/principal.js';
import type { SubmittableAgent } from './task-agents.js';
/**
 * The task as the API shows it (docs/contract.md#task-shape). Shared by the tasks service, the runtime,
 * the webhook receiver and the console: keep it the single definition.
 */

export const TASK_STATUSES = ['pending', 'executing', 'paused', 'error', 'failed', 'completed', 'stopped'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['error', 'failed', 'completed', 'stopped']);

export const TASK_SOURCES = ['api', 'webhook', 'sub_agent', 'schedule', 'a2a', 'mcp'] as const;
export type TaskSource = (typeof TASK_SOURCES)[number];

export interface TaskUser {
  id?: string | null;
  email?: string | null;
  first_name?: string | null;
  last_name?: string | null;
}

/** A file given to a task: stored by the files domain, referenced here. */
export interface TaskFile {
  id: string;
  name: string;
  mime_type: string;
  size: number;
  /** Presigned URL, valid 30 days. */
  url: string;
  /** Extracted text (absent when nothing could be extracted). Injected unless disable_attachment_injection. */
  text?: string;
}

export interface TaskTokens {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface Task {
  id: string;
  agent_id: string;
  organization_id: string;
  agent_version: number | 'draft';
  input: { text: string; files: TaskFile[]; user: TaskUser | null };
  status: TaskStatus;
  /** One of TASK_SOURCES, or the label an xpander SDK client sent (`sdk`, ...: issue 25). */
  source: TaskSource | (string & {});
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  result: string | null;
  execution_attempts: number;
  parent_execution: string | null;
  /** Agent calls that led to this task: 0 from outside, the caller's + 1 for a sub-agent or an agent calling over HTTP. */
  call_depth: number;
  sub_executions: string[];
  is_manually_stopped: boolean;
  additional_context: string | null;
  output_format: string | null;
  output_schema: Record<string, unknown> | null;
  tokens: TaskTokens;
  llm_model_provider: string | null;
  llm_model_name: string | null;
  title: string | null;
  user_id: string | null;
  /** The schedule whose occurrence made this task (source `schedule`); null otherwise. */
  schedule_id?: string | null;
  /** Set while a supervised task is `paused` for a person's decision (POST /v1/tasks/{id}/approve|reject). */
  hitl_request?: HitlRequest | null;
}

/** A mutating tool call of a supervised agent waiting for approval. */
export interface HitlRequest {
  tool: string;
  arguments: Record<string, unknown>;
  requested_at: string;
}

/** What a caller (API invoke, webhook, sub-agent) asks for. */
/** The outcome of a task run outside Agentry's workers (TaskSubmissions.report). */
export interface TaskReport {
  success: boolean;
  result: string;
  tokens: { prompt_tokens: number; completion_tokens: number };
  durationMs: number;
  /** Names of the tools the run used, as reported. */
  usedTools: string[];
  /** The raw model response as JSON text (or a note of its size when too large), kept on the trace. */
  llmResponse?: string | { truncated: true; bytes: number };
}

export interface TaskSubmission {
  organizationId: string;
  agentId: string;
  /** Caller-chosen id (1-128 printable characters) to create or continue; generated when absent. */
  taskId?: string;
  /**
   * The id of the new task when `taskId` is absent: a `newId()` the submitter drew itself, so that it could store the
   * task's uploads under it first (files.task_id: they go with the task). Never a caller's value: being fresh, it
   * names no existing task and takes the paths of a generated id (the group commit, the task inbox), whose batches
   * a duplicate id would fail for every task in them.
   */
  newTaskId?: string;
  /** A published version number, 'draft', or undefined for the current published version. */
  version?: number | 'draft';
  source: TaskSource;
  /** Stored and shown as the task's `source` instead of `source` (xpander's SDK sends its own, e.g. `sdk`). */
  sourceLabel?: string;
  text: string;
  files?: TaskFile[];
  user?: TaskUser | null;
  additionalContext?: string | null;
  expectedOutput?: string | null;
  instructionsOverride?: string | null;
  outputFormat?: string | null;
  outputSchema?: Record<string, unknown> | null;
  /** MCP graph item id -> access token, for this run only; never stored. */
  userTokens?: Record<string, string>;
  disableAttachmentInjection?: boolean;
  parentExecution?: string | null;
  /** How many agent calls led to this submission (src/tasks/call-depth.ts); 0 when absent. */
  callDepth?: number;
  /** The schedule whose occurrence this is (source `schedule`). */
  scheduleId?: string;
  /** A webhook caller's URL to call back with the signed notification when this run ends (docs/notifications.md). */
  callbackUrl?: string | null;
  /**
   * The authenticated caller of an API or key-form webhook invocation: it must be allowed to see the agent
   * (`access_scope`, src/auth/agent-access.ts). Absent for public webhook URLs and sub-agent runs.
   */
  caller?: Principal;
  /** Sub-agent runs: the calling agent, whose owner must own the called agent when that one is personal. */
  parentAgentId?: string;
  /** The end-user token presented with the invocation (unverified), for `use_oidc_pre_auth` agents (src/auth/pre-auth.service.ts). */
  userToken?: string;
  /**
   * The agent as the caller already read it in this request (the webhook receiver checks it before submitting):
   * one snapshot per submission instead of a second read. Must be the version the submission names.
   */
  agent?: SubmittableAgent;
  /**
   * The caller waits for the run (a synchronous webhook or invocation, a sub-agent call, a stream): when this
   * process's worker has a free slot, the task is committed already claimed by it and starts at once, without a
   * claim round trip or a wake-up (TaskSubmissions.commit).
   */
  awaited?: boolean;
  /**
   * The invocation as its caller sent it (an API invocation's body, a webhook call's body and query): what the
   * agent's duplication_prevention selectors read (task-dedup.ts). Absent for submissions from inside (sub-agents,
   * schedules, workflows, retries), which are never taken for duplicate events.
   */
  dedupSource?: DedupSource;
}

/** Event envelope of the stream and the trace (docs/contract.md#task-events). */
export const EVENT_TYPES = [
  'task_created',
  'task_updated',
  'task_finished',
  'chunk',
  'tool_call_request',
  'tool_call_result',
  'sub_agent_trigger',
  'llm_call',
  'auth_event',
  // agno_settings guardrails (src/guardrails/): masked, warned, refused or passed; kinds and rules, never values
  'guardrail',
  // deep planning (src/runtime/planning.ts): the plan after each change, the durable copy a new attempt resumes from
  'plan',
] as const;
export type TaskEventType = (typeof EVENT_TYPES)[number];

export interface TaskEvent {
  type: TaskEventType;
  task_id: string;
  organization_id: string;
  time: string;
  data: Record<string, unknown>;
}

/**
 * What callers outside the tasks domain (webhook receiver, sub-agent tool, console) use to start and await tasks.
 * Implemented by TaskSubmissions (task-submissions.ts).
 */
export interface TaskSubmitter {
  /**
   * Checks the agent (exists in the organization, ACTIVE, version exists), then commits the task as `pending`
   * (or continues an existing task of the same agent) and returns it. The task is durable when this resolves.
   */
  submit(submission: TaskSubmission): Promise<Task>;
  /**
   * The same checks, for a caller that is not given the task (an asynchronous webhook call): resolves once the task
   * is durable, possibly still in the inbox (task-inbox.ts), where every reader of task lists finds it. Resolves with
   * the task's id (the `x-task-id` header of the answer).
   */
  accept(submission: TaskSubmission): Promise<string>;
  /**
   * Resolves with the task once it is final (or paused), or as it is when `timeoutMs` passes or `signal` aborts
   * (the waiting client went away).
   */
  waitForFinal(organizationId: string, taskId: string, opts: WaitOptions): Promise<Task>;
}

export interface WaitOptions {
  timeoutMs: number;
  /** The waiting client went away. */
  signal?: AbortSignal;
  /** false: the caller shows no `sub_executions` (they cost a read); left empty. */
  subExecutions?: boolean;
  /**
   * The task as the caller's submission just returned it. Pending or running, its next status change will be
   * signalled, so the wait starts by listening instead of reading a row the caller already has.
   */
  submitted?: Pick<Task, 'status'>;
}
