import { canSeeAgent, listOwner } from '../auth/agent-access.js';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import type { ThreadMessage } from '../runtime/task-runner.js';
import type { TaskAgentDirectory } from './task-agents.js';
import { findAccepted, type TaskInbox } from './task-inbox.js';
import { withoutSeq } from './task-rows.js';
import { presentWithChildren, type TaskWatch } from './task-watch.js';
import { presentEvent, presentMessage, presentTask } from './task.presenter.js';
import type { Task, TaskEvent } from './task.types.js';
import type { TaskFilter, TaskRow, TasksRepository } from './tasks.repository.js';

const EVENT_BATCH = 500;

export interface TaskPage {
  items: Task[];
  total: number;
}

/** What task reading is built with (tasks.module.ts). */
export interface TaskQueriesDeps {
  repo: TasksRepository;
  agents: TaskAgentDirectory;
  inbox: TaskInbox;
  /** Follows a trace live (task-watch.ts; the same watch serves TaskSubmissions.waitForFinal). */
  watch: TaskWatch;
}

/**
 * Reading tasks: one task, lists, the thread, the trace (whole, or followed live), each answered only to a viewer
 * who may see the task's agent (src/auth/agent-access.ts). Writes nothing but the task inbox's settle before a list.
 */
export class TaskQueries {
  constructor(private readonly d: TaskQueriesDeps) {}

  /** `viewer` (the API's caller): tasks of another's personal agent are answered as missing (src/auth/agent-access.ts). */
  async get(organizationId: string, taskId: string, viewer?: Principal): Promise<Task> {
    const row = await this.findVisible(organizationId, taskId, viewer);
    if (!row) throw AppError.notFound('Task');
    return presentWithChildren(this.d.repo, row);
  }

  async list(organizationId: string, filter: TaskFilter, page: number, perPage: number, viewer?: Principal): Promise<TaskPage> {
    await this.d.inbox.settle();
    const owner = viewer && listOwner(viewer);
    const { rows, total } = await this.d.repo.list(organizationId, { ...filter, ...(owner !== undefined && { visibleTo: owner }) }, (page - 1) * perPage, perPage);
    const children = await this.d.repo.children(organizationId, rows.map((r) => r.id));
    return { items: rows.map((r) => presentTask(r, children.get(r.id) ?? [])), total };
  }

  /** Tasks of one agent; an agent that never existed is a 404, a deleted agent's tasks stay readable. */
  async listForAgent(organizationId: string, agentId: string, filter: TaskFilter, page: number, perPage: number, viewer?: Principal): Promise<TaskPage> {
    if (viewer && !canSeeAgent(viewer, await this.d.agents.accessOf(organizationId, agentId))) throw AppError.notFound('Agent');
    const out = await this.list(organizationId, { ...filter, agentId }, page, perPage);
    if (out.total === 0 && !(await this.d.agents.exists(organizationId, agentId))) throw AppError.notFound('Agent');
    return out;
  }

  async thread(organizationId: string, taskId: string, viewer?: Principal): Promise<ThreadMessage[]> {
    if (!(await this.findVisible(organizationId, taskId, viewer))) throw AppError.notFound('Task');
    return (await this.d.repo.thread(organizationId, taskId)).map(presentMessage);
  }

  /** The whole trace so far. */
  async events(organizationId: string, taskId: string, viewer?: Principal): Promise<TaskEvent[]> {
    if (!(await this.findVisible(organizationId, taskId, viewer))) throw AppError.notFound('Task');
    const out: TaskEvent[] = [];
    for (let after = 0; ; ) {
      const batch = await this.d.repo.events(organizationId, taskId, after, EVENT_BATCH);
      for (const r of batch) out.push(withoutSeq(presentEvent(r)));
      if (batch.length < EVENT_BATCH) return out;
      after = Number(batch[batch.length - 1].seq);
    }
  }

  /**
   * Replays the trace after `afterSeq`, then follows it live until the task is final (or `abort` fires).
   * Each event carries its `seq`, usable as an SSE id to resume from.
   */
  follow(organizationId: string, taskId: string, afterSeq: number, abort: AbortSignal): AsyncGenerator<TaskEvent & { seq: number }> {
    return this.d.watch.follow(organizationId, taskId, afterSeq, abort);
  }

  /** The data of the task's latest event of `type` (no caller check: the runtime reads its own task's trace). */
  async lastEventData(organizationId: string, taskId: string, type: TaskEvent['type']): Promise<Record<string, unknown> | null> {
    const row = await this.d.repo.lastEventOfType(organizationId, taskId, type);
    return row ? presentEvent(row).data : null;
  }

  /** Checks the task exists (a 404 before any streaming starts). */
  async assertExists(organizationId: string, taskId: string, viewer?: Principal): Promise<void> {
    if (!(await this.findVisible(organizationId, taskId, viewer))) throw AppError.notFound('Task');
  }

  /** Whether the task exists and the viewer may see its agent (the router's personal-scope check). */
  async visibleTo(viewer: Principal, taskId: string): Promise<boolean> {
    return (await this.findVisible(viewer.organizationId, taskId, viewer)) !== undefined;
  }

  /**
   * The task, unless the viewer may not see its agent (another's personal agent, deleted or not); TaskControl checks
   * with it before acting. A task still in the inbox is found (task-inbox.ts, findAccepted).
   */
  async findVisible(organizationId: string, taskId: string, viewer?: Principal): Promise<TaskRow | undefined> {
    const row = await findAccepted(this.d.repo, this.d.inbox, organizationId, taskId);
    if (!row || !viewer || viewer.role === 'admin') return row;
    return canSeeAgent(viewer, await this.d.agents.accessOf(organizationId, row.agent_id)) ? row : undefined;
  }
}
