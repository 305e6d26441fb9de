import type { RunnableAgentConfig } from '../agents/agent-config.js';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { TaskAgentDirectory } from './task-agents.js';
import type { TaskEndNotifier } from './task-end-notifier.js';
import { eventRow, presentTask } from './task.presenter.js';
import type { TaskQueries } from './task-queries.js';
import type { TaskSignals } from './task-signals.js';
import { presentWithChildren } from './task-watch.js';
import { FINAL_STATUSES, type Task, type TaskStatus } from './task.types.js';
import type { RemoveReleasedBlobs, TaskRow, TasksRepository } from './tasks.repository.js';

/** What task control is built with (tasks.module.ts). */
export interface TaskControlDeps {
  repo: TasksRepository;
  agents: TaskAgentDirectory;
  signals: TaskSignals;
  clock: Clock;
  notifier?: TaskEndNotifier;
  /** Finds the task for whoever asks (visibility, the task inbox) and shows it as it ended after a lost race. */
  queries: Pick<TaskQueries, 'findVisible' | 'get'>;
  /** Removes a deleted task's uploads from the blob store after the delete commits (src/files/file-disposal.ts). */
  removeBlobs?: RemoveReleasedBlobs;
}

/**
 * What a person does to a task: stop it, delete it, approve or reject its supervised call. Each checks the task is
 * visible to whoever asks (`viewer`; none for the runtime's own calls), then is one transaction with its trace event
 * (and, for a stop, the task-end notifications), then a signal that wakes the worker running it.
 */
export class TaskControl {
  constructor(private readonly d: TaskControlDeps) {}

  /** Idempotent: a final task is returned as it is; an active one ends `stopped` and its worker aborts. */
  async stop(organizationId: string, taskId: string, viewer?: Principal): Promise<Task> {
    const row = await this.d.queries.findVisible(organizationId, taskId, viewer);
    if (!row) throw AppError.notFound('Task');
    // Lost a race with the worker finishing it: show the task as it ended.
    return (await this.stopRow(row)) ?? this.d.queries.get(organizationId, taskId);
  }

  async delete(organizationId: string, taskId: string, viewer?: Principal): Promise<void> {
    const row = await this.d.queries.findVisible(organizationId, taskId, viewer);
    if (!row) throw AppError.notFound('Task');
    // Stopping first moves the fence, so the worker running it aborts and can write nothing more.
    if (!FINAL_STATUSES.has(row.status as TaskStatus)) await this.stop(organizationId, taskId);
    const { deleted, released } = await this.d.repo.delete(organizationId, taskId, this.d.clock.now());
    // Best effort after the commit: a blob it cannot remove now stays recorded, and the worker's file sweep retries.
    if (released.length) await this.d.removeBlobs?.(released);
    if (!deleted) throw AppError.notFound('Task');
    this.d.signals.publish({ kind: 'task', organizationId, taskId, statusChanged: true });
  }

  approve(organizationId: string, taskId: string, viewer?: Principal): Promise<Task> {
    return this.decide(organizationId, taskId, 'approved', viewer);
  }

  reject(organizationId: string, taskId: string, viewer?: Principal): Promise<Task> {
    return this.decide(organizationId, taskId, 'rejected', viewer);
  }

  /** Undefined when the worker finished the task first. */
  private async stopRow(row: TaskRow): Promise<Task | undefined> {
    if (FINAL_STATUSES.has(row.status as TaskStatus)) return presentWithChildren(this.d.repo, row);
    const { organization_id: organizationId, id: taskId } = row;
    const now = this.d.clock.now();
    const notifier = this.d.notifier;
    // A stop ends the task too: its notifications (docs/notifications.md) are committed with it.
    const agentConfig = notifier ? await this.agentConfigOf(row) : undefined;
    let notified = false;
    const stopped = await this.d.repo.transaction(async (trx) => {
      const r = await this.d.repo.stop(trx, organizationId, taskId, now);
      if (r) await this.d.repo.appendEvent(trx, eventRow(r, 'task_finished', now, presentTask(r)));
      const outbox = r && notifier ? notifier.plan({ status: r.status, agentConfig, callbackUrl: r.callback_url, view: () => r }) : [];
      if (outbox.length) await this.d.repo.insertDeliveries(trx, outbox);
      notified = outbox.length > 0;
      return r;
    });
    if (notified) notifier!.committed();
    this.d.signals.publish({ kind: 'task', organizationId, taskId, statusChanged: true });
    return stopped ? presentWithChildren(this.d.repo, stopped) : undefined;
  }

  /** Records a person's decision on the task's pending approval; 409 when it is not waiting for one. */
  private async decide(organizationId: string, taskId: string, decision: 'approved' | 'rejected', viewer?: Principal): Promise<Task> {
    if (!(await this.d.queries.findVisible(organizationId, taskId, viewer))) throw AppError.notFound('Task');
    const now = this.d.clock.now();
    const decided = await this.d.repo.transaction(async (trx) => {
      const r = await this.d.repo.decide(trx, organizationId, taskId, decision, now);
      if (r) await this.d.repo.appendEvent(trx, eventRow(r, 'task_updated', now, { ...presentTask(r), hitl_decision: decision }));
      return r;
    });
    if (!decided) throw new AppError('conflict', 'Task is not waiting for approval');
    this.d.signals.publish({ kind: 'task', organizationId, taskId, statusChanged: true });
    return presentWithChildren(this.d.repo, decided);
  }

  /** The configuration of the version the task ran, secrets revealed; undefined when the agent is gone. */
  private async agentConfigOf(row: TaskRow): Promise<RunnableAgentConfig | undefined> {
    const version = row.agent_version === 'draft' ? 'draft' : Number(row.agent_version);
    return (await this.d.agents.getRunnable(row.organization_id, row.agent_id, version).catch(() => undefined))?.config;
  }
}
