import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import type { TaskParts } from '../tasks/tasks.module.js';
import type { Task, TaskEvent, TaskSubmission } from '../tasks/task.types.js';
import { presentXpanderEvent, presentXpanderTask, presentXpanderTaskListItem } from './task.presenter.js';
import type { CreateExecutionBody, HistoryQuery, ReportTaskBody, UpdateExecutionBody } from './xpander.schemas.js';

type XTask = Record<string, unknown>;

/** A reported raw LLM response is kept on the trace up to this many characters of JSON; beyond, only its size. */
const LLM_RESPONSE_CAP = 64 * 1024;

/**
 * xpander's agent-execution routes over the task engine's parts: each use case is one call of TaskSubmissions,
 * TaskQueries or TaskControl and a presentation in the SDK's types. No task behaviour lives here.
 */
export class XpanderTasks {
  constructor(private readonly tasks: TaskParts) {}

  /** POST /agent-execution/{agent_id}: an asynchronous invocation (the SDK polls or streams the task). */
  async create(organizationId: string, agentId: string, version: number | undefined, b: CreateExecutionBody): Promise<XTask> {
    const submission: TaskSubmission = {
      organizationId,
      agentId,
      taskId: b.id ?? undefined,
      version,
      // A developer's call for every check (developer access), whatever label it carries.
      source: 'api',
      sourceLabel: b.source ?? undefined,
      text: b.input.text ?? '',
      files: b.input.files ?? [],
      user: b.input.user ? { id: b.input.user.id ?? null, email: b.input.user.email ?? null, first_name: b.input.user.first_name ?? null, last_name: b.input.user.last_name ?? null } : null,
      additionalContext: b.additional_context,
      expectedOutput: b.expected_output,
      instructionsOverride: b.instructions_override,
      outputFormat: b.output_format,
      outputSchema: b.output_schema,
      userTokens: b.user_tokens ?? undefined,
      disableAttachmentInjection: b.disable_attachment_injection ?? false,
      dedupSource: { body: b as Record<string, unknown> },
    };
    return presentXpanderTask(await this.tasks.submissions.submit(submission));
  }

  /** POST /agent-execution/{agent_id}/report_task: a task the SDK ran itself, recorded finished (TaskSubmissions.report). */
  async report(organizationId: string, agentId: string, b: ReportTaskBody): Promise<XTask> {
    const raw = b.llm_response === undefined || b.llm_response === null ? undefined : JSON.stringify(b.llm_response);
    const task = await this.tasks.submissions.report(
      { organizationId, agentId, taskId: b.id ?? undefined, source: 'api', sourceLabel: 'sdk', text: b.input ?? '', files: [], user: null },
      {
        success: b.is_success !== false,
        result: b.result ?? '',
        tokens: { prompt_tokens: b.tokens?.prompt_tokens ?? 0, completion_tokens: b.tokens?.completion_tokens ?? 0 },
        durationMs: (b.duration ?? 0) * 1000,
        usedTools: b.used_tools ?? [],
        llmResponse: raw === undefined ? undefined : raw.length <= LLM_RESPONSE_CAP ? raw : { truncated: true, bytes: raw.length },
      },
    );
    return presentXpanderTask(task);
  }

  async get(organizationId: string, taskId: string): Promise<XTask> {
    return presentXpanderTask(await this.tasks.queries.get(organizationId, taskId));
  }

  async historyOfAgent(organizationId: string, agentId: string, q: HistoryQuery): Promise<XTask[]> {
    const { items } = await this.tasks.queries.listForAgent(organizationId, agentId, filterOf(q), q.page, q.per_page);
    return items.map(presentXpanderTaskListItem);
  }

  /** Across agents: tasks of personal agents the caller may not see are left out, as on /v1/tasks. */
  async historyOfUser(viewer: Principal, userId: string, q: HistoryQuery): Promise<XTask[]> {
    const { items } = await this.tasks.queries.list(viewer.organizationId, { ...filterOf(q), userId }, q.page, q.per_page, viewer);
    return items.map(presentXpanderTaskListItem);
  }

  /** DELETE /agent-execution/{task_id} is the SDK's `stop`: the task stays. */
  async stop(organizationId: string, taskId: string): Promise<XTask> {
    return presentXpanderTask(await this.tasks.control.stop(organizationId, taskId));
  }

  /**
   * PATCH /agent-execution/{task_id}/update. Agentry's worker owns a task's status, result and tokens, so the one
   * change a client may ask is `stopped`; a save that changes nothing (the SDK re-sends the task it loaded) answers
   * the task. Any other change conflicts with the worker's ownership: 409, rather than acknowledged and dropped.
   */
  async update(organizationId: string, taskId: string, b: UpdateExecutionBody): Promise<XTask> {
    const current = await this.tasks.queries.get(organizationId, taskId);
    if (b.status === 'stopped' && current.status !== 'stopped') return this.stop(organizationId, taskId);
    const changed = changedFields(current, b);
    if (changed.length) {
      throw new AppError('conflict', `Agentry's workers run tasks and own their ${changed.join(', ')}: a client can only stop a task (status "stopped")`);
    }
    return presentXpanderTask(current);
  }

  /** The trace so far in the SDK's types. */
  async events(organizationId: string, taskId: string): Promise<Record<string, unknown>[]> {
    return (await this.tasks.queries.events(organizationId, taskId)).flatMap((e) => {
      const out = presentXpanderEvent(e);
      return out ? [out] : [];
    });
  }

  /** The task's events in the SDK's types (its `TaskUpdateEvent`); events it has no type for are skipped. */
  async *follow(organizationId: string, taskId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<Record<string, unknown> & { seq: number }> {
    for await (const e of this.tasks.queries.follow(organizationId, taskId, afterSeq, signal)) {
      const out = presentXpanderEvent(e as TaskEvent);
      if (out) yield { ...out, seq: e.seq };
    }
  }
}

function filterOf(q: HistoryQuery) {
  return { status: q.status, userId: q.user_id, parentExecution: q.parent_task_id };
}

function changedFields(t: Task, b: UpdateExecutionBody): string[] {
  const out: string[] = [];
  if (b.status != null && b.status !== t.status) out.push('status');
  if (b.result != null && b.result !== t.result) out.push('result');
  if (b.source != null && b.source !== t.source) out.push('source');
  if (b.tokens && ((b.tokens.prompt_tokens ?? t.tokens.prompt_tokens) !== t.tokens.prompt_tokens || (b.tokens.completion_tokens ?? t.tokens.completion_tokens) !== t.tokens.completion_tokens)) out.push('tokens');
  if (b.last_executed_node_id != null) out.push('last_executed_node_id');
  if (b.tool_call_payload_extension && Object.keys(b.tool_call_payload_extension).length) out.push('payload_extension');
  if (b.payload_extension && Object.keys(b.payload_extension).length) out.push('payload_extension');
  return [...new Set(out)];
}
