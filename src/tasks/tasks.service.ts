import { isUniqueViolation } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { GroupCommit } from '../lib/group-commit.js';
import { newId } from '../lib/ids.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { ThreadMessage } from '../runtime/task-runner.js';
import { taskStrategies, type SubmittableAgent, type TaskAgentDirectory } from './task-agents.js';
import { isValidTaskId, TASK_ID_RULE } from './task-ids.js';
import type { TaskInbox } from './task-inbox.js';
import type { LocalSlots, RunStart } from './local-slots.js';
import type { TaskEndNotifier } from './task-end-notifier.js';
import { eventRow, presentEvent, presentMessage, presentTask } from './task.presenter.js';
import type { TaskSignals } from './task-signals.js';
import { presentWithChildren, TaskWatch } from './task-watch.js';
import { TaskControl } from './task-control.js';
import { checkDailyLimit, overDailyLimit } from './task-daily-limit.js';
import { jsonOrNull, newTaskRow, withoutSeq } from './task-rows.js';
import { FINAL_STATUSES, type Task, type TaskEvent, type TaskReport, type TaskSubmission, type TaskSubmitter, type TaskStatus, type WaitOptions } from './task.types.js';
import type { ContinuationFields, NewEventRow, TaskFilter, TaskRow, TasksRepository } from './tasks.repository.js';
import { hasNulText, nulTextError } from '../lib/nul-text.js';
import { canSeeAgent, listOwner } from '../auth/agent-access.js';
import type { Principal } from '../auth/principal.js';
import { admitSubmission, type InvocationPreAuth } from './submission-access.js';
import { checkedCallDepth } from './call-depth.js';
import type { ClaimedTask, ClaimHooks } from './task-claim-hooks.js';

const EVENT_BATCH = 500;
/** Tasks per group commit: 44 columns each, well under SQLite's 32,766 bound parameters per statement. */
const INTAKE_BATCH = 200;

/** A submission that passed its checks: the agent it runs, its strategies and the fields its run stores. */
interface Prepared {
  agent: SubmittableAgent;
  strategies: ReturnType<typeof taskStrategies>;
  fields: ContinuationFields;
  now: number;
}

export type { RunStart } from './local-slots.js';

export type { ClaimedTask, ClaimHooks } from './task-claim-hooks.js';

export interface TaskPage {
  items: Task[];
  total: number;
}

/** What the task use cases are built with (tasks.module.ts). */
export interface TasksServiceDeps {
  repo: TasksRepository;
  agents: TaskAgentDirectory;
  signals: TaskSignals;
  secretBox: SecretBox;
  clock: Clock;
  inbox: TaskInbox;
  /** This process's worker, when it runs one: awaited submissions are handed to a free slot (local-slots.ts). */
  localSlots?: LocalSlots;
  /** When an awaited run starts beside its commit (local-slots.ts); 'now' by default. */
  runStart?: RunStart;
  notifier?: TaskEndNotifier;
  /** OIDC pre-auth of invocations (src/auth/pre-auth.service.ts); without it a pre-auth agent's invocation is refused. */
  preAuth?: InvocationPreAuth;
}

/**
 * Use cases of tasks: submission (API invoke, webhooks, sub-agents), waiting, reading, stopping and the
 * supervised-approval decisions. The worker (task.worker.ts) runs what this commits.
 */
export class TasksService implements TaskSubmitter {
  /** New tasks committed together: see GroupCommit. */
  private readonly intake = new GroupCommit<{ task: TaskRow; event: NewEventRow }, number>((items) => this.d.repo.insertNew(items), INTAKE_BATCH);

  /** Waits for a final status and follows traces (task-watch.ts). */
  private readonly watcher: TaskWatch;
  /** Stop and approval decisions (task-control.ts). */
  private readonly control: TaskControl;

  constructor(private readonly d: TasksServiceDeps) {
    this.watcher = new TaskWatch(d.repo, d.signals, d.localSlots);
    this.control = new TaskControl(d);
  }

  async submit(s: TaskSubmission): Promise<Task> {
    return (await this.enqueue(s)).task;
  }

  /**
   * Commits the task for a caller that is not given it (an asynchronous webhook call): a brand-new task goes
   * through the inbox (task-inbox.ts); a caller-chosen id (it may continue a conversation) and an agent with a daily
   * limit (counted in the inserting transaction) take the path of `submit`.
   */
  async accept(s: TaskSubmission): Promise<string> {
    const prepared = await this.prepare(s);
    if (s.taskId !== undefined || prepared.strategies.maxRunsPerDay !== undefined) {
      return (await this.commit(s, prepared)).task.id;
    }
    const id = newId();
    await this.d.inbox.append(newTaskRow(s, id, prepared.fields, prepared.now));
    this.d.signals.publish({ kind: 'queued', inbox: true });
    return id;
  }

  /**
   * Commits the task (new, or the next run of a finished conversation) as `pending` and wakes the workers.
   * `cursor` is the trace position just before this run's `task_created` event, for streaming it.
   */
  async enqueue(s: TaskSubmission): Promise<{ task: Task; cursor: number }> {
    return this.commit(s, await this.prepare(s));
  }

  private async commit(s: TaskSubmission, { strategies, fields, now }: Prepared): Promise<{ task: Task; cursor: number }> {
    // A new task (the id is ours, so nothing can exist under it) joins the group commit; a caller-chosen id may
    // continue a conversation, and a daily limit counts before inserting: those commit on their own.
    if (s.taskId === undefined && strategies.maxRunsPerDay === undefined) {
      const row = newTaskRow(s, newId(), fields, now);
      const task = presentTask(row);
      // The trace and the caller see the task as created (pending) either way; the worker's first event says it runs.
      const slot = s.awaited ? this.d.localSlots?.reserve() : undefined;
      // Spread, not assign: the copy keeps the row's fast shape (the claim only overwrites existing columns).
      const stored = slot ? { ...row, ...slot.claim(now) } : row;
      const committing = this.intake.add({ task: stored, event: eventRow(row, 'task_created', now, task) });
      // The run starts beside its commit (local-slots.ts says what waits for the commit and why that is safe).
      if (slot) {
        const start = () => slot.start(stored, committing.then(() => true, () => false));
        // The group commit sends its batch on the next turn (setImmediate, first in line): see RunStart.
        if ((this.d.runStart ?? 'now') === 'after-send') setImmediate(start);
        else start();
      }
      const seq = await committing;
      if (!slot) this.published(s.organizationId, row.id, true);
      return { task, cursor: seq - 1 };
    }

    const id = s.taskId ?? newId();
    // Tasks still in the inbox are runs too.
    if (strategies.maxRunsPerDay !== undefined) await this.d.inbox.settle();
    // A concurrent first submission of the same new id loses the insert race once, then sees the task.
    for (let attempt = 0; ; attempt++) {
      try {
        const out = await this.d.repo.transaction(async (trx) => {
          // Counted in the transaction that inserts, serialised per agent: simultaneous submissions at the limit
          // cannot both pass it.
          if (strategies.maxRunsPerDay !== undefined) await checkDailyLimit(this.d.repo, trx, s, strategies.maxRunsPerDay, now);
          const existing = await this.d.repo.find(s.organizationId, id, trx);
          let row: TaskRow | undefined;
          if (existing) {
            if (existing.agent_id !== s.agentId) throw new AppError('conflict', 'Task id is already used by another agent');
            row = await this.d.repo.continueRun(trx, s.organizationId, id, fields, now);
            if (!row) throw new AppError('conflict', 'Task is still running; wait for it to finish or stop it');
          } else {
            row = newTaskRow(s, id, fields, now);
            await this.d.repo.insert(trx, row);
          }
          await this.d.repo.insertRun(trx, { organization_id: s.organizationId, task_id: id, run: row.run, agent_id: s.agentId, created_at: now });
          const task = presentTask(row);
          const seq = await this.d.repo.appendEvent(trx, eventRow(row, 'task_created', now, task));
          return { task, cursor: seq - 1 };
        });
        this.published(s.organizationId, id, false);
        return out;
      } catch (err) {
        if (attempt === 0 && isUniqueViolation(err)) continue;
        throw err;
      }
    }
  }

  /**
   * Commits a new task in the same transaction as `hooks.claim` (a schedule's occurrence, src/schedules/): both or
   * neither, so however many processes race for one occurrence, one task comes of it. The task is an ordinary one:
   * the checks of `submit` (which throw before anything is written), the agent's daily limit counted in the
   * transaction, the same row, run and `task_created` event. `claim` false (another process has the occurrence)
   * commits nothing; over the daily limit the claim commits without a task and `hooks.settle` records why.
   */
  async enqueueClaimed(s: TaskSubmission, hooks: ClaimHooks): Promise<ClaimedTask> {
    const { strategies, fields, now } = await this.prepare(s);
    if (s.taskId !== undefined) throw new Error('a claimed submission makes a new task; it takes no task id');
    if (strategies.maxRunsPerDay !== undefined) await this.d.inbox.settle();
    const id = newId();
    const out = await this.d.repo.transaction(async (trx): Promise<ClaimedTask> => {
      if (!(await hooks.claim(trx, id))) return { claimed: false };
      if (strategies.maxRunsPerDay !== undefined) {
        const over = await overDailyLimit(this.d.repo, trx, s, strategies.maxRunsPerDay, now);
        if (over) {
          await hooks.settle(trx, { limited: over.message });
          return { claimed: true, limited: over.message };
        }
      }
      const row = newTaskRow(s, id, fields, now);
      await this.d.repo.insert(trx, row);
      await this.d.repo.insertRun(trx, { organization_id: s.organizationId, task_id: id, run: row.run, agent_id: s.agentId, created_at: now });
      const task = presentTask(row);
      await this.d.repo.appendEvent(trx, eventRow(row, 'task_created', now, task));
      await hooks.settle(trx, { taskId: id });
      return { claimed: true, task };
    });
    if (out.claimed && out.task) this.published(s.organizationId, id, false);
    return out;
  }

  /** The checks every submission passes, and the fields its run stores. */
  private async prepare(s: TaskSubmission): Promise<Prepared> {
    if (s.taskId !== undefined && !isValidTaskId(s.taskId)) throw AppError.invalid(['body', 'id'], TASK_ID_RULE);
    const agent = s.agent ?? (await this.d.agents.getSubmittable(s.organizationId, s.agentId, s.version));
    const { user, userTokens } = await admitSubmission(s, agent, this.d.agents, this.d.preAuth);
    if (agent.status !== 'ACTIVE') throw new AppError('conflict', 'Agent is inactive');
    // Spec 2.1: with developer_access off the API refuses invocations (the webhook receiver checks its own forms);
    // a manager calling it as a sub-agent or a schedule is not a developer's call.
    if (s.source === 'api' && agent.config.developer_access === false) throw new AppError('forbidden', 'Developer access is disabled for this agent');
    const strategies = taskStrategies(agent.config);
    const now = this.d.clock.now();

    const cfg = agent.config;
    const fields: ContinuationFields = {
      agent_version: String(agent.version),
      source: s.sourceLabel ?? s.source,
      input_text: s.text,
      input_files: JSON.stringify(s.files ?? []),
      input_user: user ? JSON.stringify(user) : null,
      user_id: user?.id ?? null,
      additional_context: s.additionalContext ?? null,
      expected_output: s.expectedOutput ?? null,
      instructions_override: s.instructionsOverride ?? null,
      // The effective format of this run: the invocation's, else the agent's.
      output_format: s.outputFormat ?? cfg.output_format,
      output_schema: jsonOrNull(s.outputSchema ?? cfg.output_schema),
      disable_attachment_injection: s.disableAttachmentInjection ? 1 : 0,
      sealed_user_tokens: userTokens && Object.keys(userTokens).length ? this.d.secretBox.sealJson(userTokens) : null,
      max_attempts: strategies.maxAttempts,
      parent_execution: s.parentExecution ?? null,
      call_depth: checkedCallDepth(s.callDepth),
      callback_url: s.callbackUrl ?? null,
    };
    // Before any group commit: one row PostgreSQL refuses would fail every other caller's row in its batch, and one
    // in the task inbox would stop its move into `tasks` for everyone. Every text of a new row comes from here.
    if (hasNulText(fields as unknown as Record<string, unknown>)) throw nulTextError();
    return { agent, strategies, fields, now };
  }

  /**
   * A task run outside Agentry's workers (xpander's SDK reports the runs of agents it executes itself), recorded as
   * finished with its result, tokens and duration so lists, the console and notifications see it; nothing runs. A
   * reported id that exists already is a conflict: a task's outcome is written once, by whoever ran it.
   */
  async report(s: TaskSubmission, r: TaskReport): Promise<Task> {
    const id = s.taskId ?? newId();
    if (!isValidTaskId(id)) throw AppError.invalid(['body', 'id'], TASK_ID_RULE);
    if (await this.findAccepted(s.organizationId, id)) throw new AppError('conflict', 'Task already exists');
    const { fields, agent, now } = await this.prepare({ ...s, taskId: undefined });
    const tokens = { prompt_tokens: r.tokens.prompt_tokens, completion_tokens: r.tokens.completion_tokens, total_tokens: r.tokens.prompt_tokens + r.tokens.completion_tokens };
    const started = now - Math.max(0, Math.round(r.durationMs));
    const row: TaskRow = { ...newTaskRow(s, id, fields, started), status: r.success ? 'completed' : 'failed', result: r.result, ...tokens, started_at: started, finished_at: now };
    if (hasNulText({ result: r.result })) throw nulTextError();
    let notified = false;
    await this.d.repo.transaction(async (trx) => {
      await this.d.repo.insertNewIn(trx, [{ task: row, event: eventRow(row, 'task_created', started, presentTask({ ...row, status: 'pending', result: null, finished_at: null })) }]);
      await this.d.repo.appendEvent(trx, eventRow(row, 'task_finished', now, { ...presentTask(row), reported: true, used_tools: r.usedTools, ...(r.llmResponse !== undefined ? { llm_response: r.llmResponse } : {}) }));
      const outbox = this.d.notifier ? this.d.notifier.plan({ status: row.status, agentConfig: agent.config, callbackUrl: row.callback_url, view: () => row }) : [];
      if (outbox.length) await this.d.repo.insertDeliveries(trx, outbox);
      notified = outbox.length > 0;
    });
    if (notified) this.d.notifier!.committed();
    // Finished already: no worker is woken; watchers of its trace are.
    this.d.signals.publish({ kind: 'task', organizationId: s.organizationId, taskId: id, statusChanged: true });
    return presentWithChildren(this.d.repo, row);
  }

  waitForFinal(organizationId: string, taskId: string, opts: WaitOptions): Promise<Task> {
    return this.watcher.waitForFinal(organizationId, taskId, opts);
  }

  /**
   * Replays the trace after `afterSeq`, then follows it live until the task is final (or `abort` fires).
   * Each event carries its `seq`, usable as an SSE id to resume from.
   */
  follow(organizationId: string, taskId: string, afterSeq: number, abort: AbortSignal): AsyncGenerator<TaskEvent & { seq: number }> {
    return this.watcher.follow(organizationId, taskId, afterSeq, abort);
  }

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

  /** Idempotent: a final task is returned as it is; an active one ends `stopped` and its worker aborts. */
  async stop(organizationId: string, taskId: string, viewer?: Principal): Promise<Task> {
    const row = await this.findVisible(organizationId, taskId, viewer);
    if (!row) throw AppError.notFound('Task');
    // Lost a race with the worker finishing it: show the task as it ended.
    return (await this.control.stop(row)) ?? this.get(organizationId, taskId);
  }

  /**
   * A task by id, settling the task inbox first when it is not found: an asynchronous webhook call's answer carries
   * its task's id (`x-task-id`) while the task may still wait in the inbox. Only a miss pays for the settle.
   */
  private async findAccepted(organizationId: string, taskId: string): Promise<TaskRow | undefined> {
    const row = await this.d.repo.find(organizationId, taskId);
    if (row) return row;
    await this.d.inbox.settle();
    return this.d.repo.find(organizationId, taskId);
  }

  async delete(organizationId: string, taskId: string, viewer?: Principal): Promise<void> {
    const row = await this.findVisible(organizationId, taskId, viewer);
    if (!row) throw AppError.notFound('Task');
    // Stopping first moves the fence, so the worker running it aborts and can write nothing more.
    if (!FINAL_STATUSES.has(row.status as TaskStatus)) await this.stop(organizationId, taskId);
    if (!(await this.d.repo.delete(organizationId, taskId))) throw AppError.notFound('Task');
    this.d.signals.publish({ kind: 'task', organizationId, taskId, statusChanged: true });
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

  /** The data of the task's latest event of `type` (no caller check: the runtime reads its own task's trace). */
  async lastEventData(organizationId: string, taskId: string, type: TaskEvent['type']): Promise<Record<string, unknown> | null> {
    const row = await this.d.repo.lastEventOfType(organizationId, taskId, type);
    return row ? presentEvent(row).data : null;
  }

  /** Checks the task exists (a 404 before any streaming starts). */
  async assertExists(organizationId: string, taskId: string, viewer?: Principal): Promise<void> {
    if (!(await this.findVisible(organizationId, taskId, viewer))) throw AppError.notFound('Task');
  }

  approve(organizationId: string, taskId: string, viewer?: Principal): Promise<Task> {
    return this.decide(organizationId, taskId, 'approved', viewer);
  }

  reject(organizationId: string, taskId: string, viewer?: Principal): Promise<Task> {
    return this.decide(organizationId, taskId, 'rejected', viewer);
  }

  private async decide(organizationId: string, taskId: string, decision: 'approved' | 'rejected', viewer?: Principal): Promise<Task> {
    const row = await this.findVisible(organizationId, taskId, viewer);
    if (!row) throw AppError.notFound('Task');
    return this.control.decide(row, decision);
  }

  /** Whether the task exists and the viewer may see its agent (the router's personal-scope check). */
  async visibleTo(viewer: Principal, taskId: string): Promise<boolean> {
    return (await this.findVisible(viewer.organizationId, taskId, viewer)) !== undefined;
  }

  /** The task, unless the viewer may not see its agent (another's personal agent, deleted or not). */
  private async findVisible(organizationId: string, taskId: string, viewer?: Principal): Promise<TaskRow | undefined> {
    const row = await this.findAccepted(organizationId, taskId);
    if (!row || !viewer || viewer.role === 'admin') return row;
    return canSeeAgent(viewer, await this.d.agents.accessOf(organizationId, row.agent_id)) ? row : undefined;
  }

  /**
   * Wakes the workers, and whoever waits on the task. A brand-new task's id is known only in this process until
   * the call is answered, so its own signal need not cross processes (`local`).
   */
  private published(organizationId: string, taskId: string, isNew: boolean): void {
    this.d.signals.publish({ kind: 'queued' });
    this.d.signals.publish({ kind: 'task', organizationId, taskId, statusChanged: true }, { local: isNew });
  }
}
