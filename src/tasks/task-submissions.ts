import { isUniqueViolation } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { GroupCommit } from '../lib/group-commit.js';
import { newId } from '../lib/ids.js';
import { hasNulText, nulTextError } from '../lib/nul-text.js';
import type { SecretBox } from '../lib/secret-box.js';
import { checkedCallDepth } from './call-depth.js';
import type { LocalSlots, RunStart } from './local-slots.js';
import { admitSubmission, type Admitted, type InvocationPreAuth } from './submission-access.js';
import { refuseModelOnlyFields, taskStrategies, type SubmittableAgent, type TaskAgentDirectory } from './task-agents.js';
import type { ClaimedTask, ClaimHooks } from './task-claim-hooks.js';
import { checkDailyLimit, overDailyLimit } from './task-daily-limit.js';
import type { TaskEndNotifier } from './task-end-notifier.js';
import { isValidTaskId, TASK_ID_RULE } from './task-ids.js';
import { dedupKey } from './task-dedup.js';
import { findAccepted, type TaskInbox } from './task-inbox.js';
import { jsonOrNull, newTaskRow } from './task-rows.js';
import type { TaskSignal, TaskSignals } from './task-signals.js';
import { presentWithChildren, type TaskWatch } from './task-watch.js';
import { eventRow, presentTask } from './task.presenter.js';
import type { Task, TaskReport, TaskSubmission, TaskSubmitter, WaitOptions } from './task.types.js';
import type { ContinuationFields, NewEventRow, TaskRow, TasksRepository } from './tasks.repository.js';
import type { OutputSchemaCheck } from '../lib/schema-checker.js';

/** Tasks per group commit: 44 columns each, well under SQLite's 32,766 bound parameters per statement. */
const INTAKE_BATCH = 200;
/** Deduplicated events per transaction: each is a few statements of its own, so a batch's latency bounds it. */
const EVENTS_BATCH = 64;

/** The repository's transaction, as TaskSubmissions hands it back to the repository. */
type Trx = Parameters<Parameters<TasksRepository['transaction']>[0]>[0];

/** A submission committed outside the plain group commit; `duplicate`: answered with an earlier event's task. */
interface Committed {
  task: Task;
  cursor: number;
  duplicate?: true;
}
/** What every accepted call publishes: one frozen object, not one per call. */
const QUEUED_IN_INBOX: TaskSignal = Object.freeze({ kind: 'queued', inbox: true });
/** ... when its organization is not the previous entry's: the worker then settles the whole inbox (fair claims). */
const QUEUED_IN_INBOX_INTERLEAVED: TaskSignal = Object.freeze({ kind: 'queued', inbox: true, interleaved: true });

/** A submission that passed its checks: the agent it runs, its strategies and the fields its run stores. */
interface Prepared {
  agent: SubmittableAgent;
  strategies: ReturnType<typeof taskStrategies>;
  fields: ContinuationFields;
  now: number;
  /** The event's key when the agent prevents duplicate events and the call carries the selected values (task-dedup.ts). */
  dedupKey?: string;
}

/** What task submission is built with (tasks.module.ts). */
export interface TaskSubmissionsDeps {
  repo: TasksRepository;
  agents: TaskAgentDirectory;
  signals: TaskSignals;
  secretBox: SecretBox;
  clock: Clock;
  inbox: TaskInbox;
  /** Waits for a submitted task's final status (task-watch.ts; the same watch serves TaskQueries.follow). */
  watch: TaskWatch;
  /** This process's worker, when it runs one: awaited submissions are handed to a free slot (local-slots.ts). */
  localSlots?: LocalSlots;
  /** When an awaited run starts beside its commit (local-slots.ts); 'now' by default. */
  runStart?: RunStart;
  notifier?: TaskEndNotifier;
  /** OIDC pre-auth of invocations (src/auth/pre-auth.service.ts); without it a pre-auth agent's invocation is refused. */
  preAuth?: InvocationPreAuth;
  /** Refuses (422) an invocation's output_schema the run could not enforce (lib/schema-checker.ts). */
  checkOutputSchema?: OutputSchemaCheck;
  /** Counts the invocations answered with an earlier event's task (duplication_prevention; /metrics). */
  onDuplicateEvent?: () => void;
}

/**
 * Submitting tasks: the API's invocations, webhook calls, sub-agents, schedules, MCP and A2A callers, and runs
 * reported by xpander's SDK. Each checks the agent and the caller, commits the task and wakes the workers
 * (task.worker.ts runs it); `waitForFinal` is the wait of a caller that has just submitted. Reading, following and
 * stopping tasks are TaskQueries and TaskControl.
 */
export class TaskSubmissions implements TaskSubmitter {
  /** New tasks committed together: see GroupCommit. */
  private readonly intake = new GroupCommit<{ task: TaskRow; event: NewEventRow }, number>((items) => this.d.repo.insertNew(items), INTAKE_BATCH);

  constructor(private readonly d: TaskSubmissionsDeps) {}

  async submit(s: TaskSubmission): Promise<Task> {
    return (await this.enqueue(s)).task;
  }

  /**
   * Commits the task for a caller that is not given it (an asynchronous webhook call): a brand-new task goes
   * through the inbox (task-inbox.ts); a caller-chosen id (it may continue a conversation), an agent with a daily
   * limit (counted in the inserting transaction) and an event that may be a duplicate (its key taken in that
   * transaction) take the path of `submit`.
   */
  accept(s: TaskSubmission): Promise<string> {
    // Not an async function: a warm agent is prepared at once, and then the inbox commit's promise is the only one
    // an accepted call waits on (every accepted webhook call comes through here).
    try {
      const preparing = this.prepare(s);
      return preparing instanceof Promise ? preparing.then((p) => this.acceptPrepared(s, p)) : this.acceptPrepared(s, preparing);
    } catch (e) {
      // A refusal is a rejection, as from an async function: callers may only attach handlers.
      return Promise.reject(e);
    }
  }

  private acceptPrepared(s: TaskSubmission, prepared: Prepared): Promise<string> {
    if (s.taskId !== undefined || prepared.strategies.maxRunsPerDay !== undefined || prepared.dedupKey !== undefined) {
      return this.commit(s, prepared).then((c) => c.task.id);
    }
    const id = s.newTaskId ?? newId();
    const interleaved = this.d.inbox.interleaves(s.organizationId);
    return this.d.inbox.append(newTaskRow(s, id, prepared.fields, prepared.now)).then(() => {
      this.d.signals.publish(interleaved ? QUEUED_IN_INBOX_INTERLEAVED : QUEUED_IN_INBOX);
      return id;
    });
  }

  /**
   * Commits the task (new, or the next run of a finished conversation) as `pending` and wakes the workers.
   * `cursor` is the trace position just before this run's `task_created` event, for streaming it.
   */
  async enqueue(s: TaskSubmission): Promise<{ task: Task; cursor: number }> {
    return this.commit(s, await this.prepare(s));
  }

  private async commit(s: TaskSubmission, { strategies, fields, now, dedupKey }: Prepared): Promise<{ task: Task; cursor: number }> {
    // A new task (the id is ours, so nothing can exist under it) joins the group commit; a caller-chosen id may
    // continue a conversation, a daily limit counts before inserting, and a possible duplicate event looks for its
    // earlier one: those commit on their own.
    if (s.taskId === undefined && strategies.maxRunsPerDay === undefined && dedupKey === undefined) {
      const row = newTaskRow(s, s.newTaskId ?? newId(), fields, now);
      const task = presentTask(row);
      // The trace and the caller see the task as created (pending) either way; the worker's first event says it runs.
      const slot = s.awaited ? this.d.localSlots?.reserve(s.organizationId, !!s.parentExecution) : undefined;
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

    const id = s.taskId ?? s.newTaskId ?? newId();
    // A new event of a deduplicating agent: its key and task join the events' group commit (one transaction a batch).
    if (s.taskId === undefined && strategies.maxRunsPerDay === undefined) return this.settled(s, id, await this.events.add({ s, prepared: { strategies, fields, now, dedupKey }, id }));
    // Tasks still in the inbox are runs too.
    if (strategies.maxRunsPerDay !== undefined) await this.d.inbox.settle();
    // A concurrent first submission of the same new id loses the insert race once, then sees the task.
    for (let attempt = 0; ; attempt++) {
      try {
        const out = await this.d.repo.transaction((trx) => this.commitIn(trx, s, { strategies, fields, now, dedupKey }, id));
        return this.settled(s, id, out);
      } catch (err) {
        if (attempt === 0 && isUniqueViolation(err)) continue;
        throw err;
      }
    }
  }

  /** After the commit: a duplicate is counted, a new run wakes the workers. */
  private settled(s: TaskSubmission, id: string, out: Committed): { task: Task; cursor: number } {
    if (out.duplicate) {
      this.d.onDuplicateEvent?.();
      return { task: out.task, cursor: out.cursor };
    }
    this.published(s.organizationId, id, false);
    return out;
  }

  /**
   * Deduplicating agents' new events, each key and task in one transaction for the batch (GroupCommit: a failing
   * batch is retried one by one). Taken in key order, so two processes' batches wait for each other's keys in the
   * same order instead of deadlocking; two deliveries of one event in one batch see each other (the second is a
   * duplicate of the first, in the same transaction).
   */
  private readonly events = new GroupCommit<{ s: TaskSubmission; prepared: Omit<Prepared, 'agent'>; id: string }, Committed>(
    (items) =>
      this.d.repo.transaction(async (trx) => {
        const out: Committed[] = new Array(items.length);
        const order = items.map((_, i) => i).sort((a, b) => (items[a]!.prepared.dedupKey! < items[b]!.prepared.dedupKey! ? -1 : 1));
        for (const i of order) out[i] = await this.commitIn(trx, items[i]!.s, items[i]!.prepared, items[i]!.id);
        return out;
      }),
    EVENTS_BATCH,
  );

  /** The task of a submission that does not join the plain group commit, in the caller's transaction. */
  private async commitIn(trx: Trx, s: TaskSubmission, { strategies, fields, now, dedupKey }: Omit<Prepared, 'agent'>, id: string): Promise<Committed> {
    // Before the daily limit: a duplicate starts no run, so it is not one to count or refuse.
    if (dedupKey !== undefined) {
      const claim = { organizationId: s.organizationId, agentId: s.agentId, key: dedupKey, taskId: id, now, expiresAt: now + strategies.dedup!.ttlMs };
      const earlier = await this.d.repo.claimDedupKey(trx, claim);
      if (earlier !== undefined) {
        const row = await this.d.repo.find(s.organizationId, earlier, trx);
        // The caller follows the earlier task from its first event (a stream replays it whole).
        if (row) return { task: presentTask(row), cursor: 0, duplicate: true };
        await this.d.repo.retakeDedupKey(trx, claim, earlier);
      }
    }
    // Counted in the transaction that inserts, serialised per agent: simultaneous submissions at the limit
    // cannot both pass it.
    if (strategies.maxRunsPerDay !== undefined) await checkDailyLimit(this.d.repo, trx, s, strategies.maxRunsPerDay, now);
    // Only a caller's id can name an existing task; a generated one (ours) cannot, so it costs no read.
    const existing = s.taskId === undefined ? undefined : await this.d.repo.find(s.organizationId, id, trx);
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

  /**
   * The checks every submission passes, and the fields its run stores. Answered at once (no promise) when the caller
   * hands the agent over and admitting needs no lookup (no pre-auth, no parent's personal agent): an asynchronous
   * webhook call, the common case, then spends no promise here.
   */
  private prepare(s: TaskSubmission): Prepared | Promise<Prepared> {
    if (s.taskId !== undefined && !isValidTaskId(s.taskId)) throw AppError.invalid(['body', 'id'], TASK_ID_RULE);
    // Only calls that bring their own output_schema wait for this; the others stay synchronous here.
    if (s.outputSchema && this.d.checkOutputSchema) {
      return this.d.checkOutputSchema(s.organizationId, s.outputSchema, ['body', 'output_schema']).then(() => this.prepareAgent(s));
    }
    return this.prepareAgent(s);
  }

  private prepareAgent(s: TaskSubmission): Prepared | Promise<Prepared> {
    if (!s.agent) return this.d.agents.getSubmittable(s.organizationId, s.agentId, s.version).then((agent) => this.prepareFor(s, agent));
    return this.prepareFor(s, s.agent);
  }

  private prepareFor(s: TaskSubmission, agent: SubmittableAgent): Prepared | Promise<Prepared> {
    const admitted = admitSubmission(s, agent, this.d.agents, this.d.preAuth);
    return admitted instanceof Promise ? admitted.then((a) => this.prepared(s, agent, a)) : this.prepared(s, agent, admitted);
  }

  private prepared(s: TaskSubmission, agent: SubmittableAgent, { user, userTokens }: Admitted): Prepared {
    if (agent.status !== 'ACTIVE') throw new AppError('conflict', 'Agent is inactive');
    // Spec 2.1: with developer_access off the API refuses invocations (the webhook receiver checks its own forms);
    // a manager calling it as a sub-agent or a schedule is not a developer's call.
    if (s.source === 'api' && agent.config.developer_access === false) throw new AppError('forbidden', 'Developer access is disabled for this agent');
    refuseModelOnlyFields(agent.config, s);
    const strategies = taskStrategies(agent.config);
    const now = this.d.clock.now();

    const cfg = agent.config;
    const fields: ContinuationFields = {
      agent_version: String(agent.version),
      source: s.sourceLabel ?? s.source,
      input_text: s.text,
      input_files: s.files?.length ? JSON.stringify(s.files) : '[]',
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
    // Only calls from outside carry a source (webhooks, API invocations): internal submissions are never duplicates.
    const dedupKeyOf = strategies.dedup && s.dedupSource ? dedupKey(strategies.dedup, s.dedupSource) : undefined;
    return { agent, strategies, fields, now, dedupKey: dedupKeyOf };
  }

  /**
   * A task run outside Agentry's workers (xpander's SDK reports the runs of agents it executes itself), recorded as
   * finished with its result, tokens and duration so lists, the console and notifications see it; nothing runs. A
   * reported id that exists already is a conflict: a task's outcome is written once, by whoever ran it.
   */
  async report(s: TaskSubmission, r: TaskReport): Promise<Task> {
    const id = s.taskId ?? newId();
    if (!isValidTaskId(id)) throw AppError.invalid(['body', 'id'], TASK_ID_RULE);
    if (await findAccepted(this.d.repo, this.d.inbox, s.organizationId, id)) throw new AppError('conflict', 'Task already exists');
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

  /**
   * Resolves with the task once it is final (or paused), or as it is when `timeoutMs` passes or `signal` aborts.
   * Its callers have just submitted the task (most pass it as `opts.submitted`): an awaited run of this process's
   * worker signals its outcome with the row, so the wait usually reads nothing (task-watch.ts).
   */
  waitForFinal(organizationId: string, taskId: string, opts: WaitOptions): Promise<Task> {
    return this.d.watch.waitForFinal(organizationId, taskId, opts);
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
