import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { TaskRunner } from '../runtime/task-runner.js';
import type { TaskAgentDirectory } from './task-agents.js';
import type { TaskEndNotifier } from './task-end-notifier.js';
import type { InvocationPreAuth } from './submission-access.js';
import { TaskInbox } from './task-inbox.js';
import { TaskInboxRepository } from './task-inbox.repository.js';
import { TaskQueueRepository } from './task-queue.repository.js';
import { TaskSignals } from './task-signals.js';
import type { SummaryCoverage } from './thread-history.js';
import { TaskWorker } from './task.worker.js';
import { TasksRepository, type RemoveReleasedBlobs } from './tasks.repository.js';
import { TaskControl } from './task-control.js';
import { TaskQueries } from './task-queries.js';
import { TaskSubmissions } from './task-submissions.js';
import { TaskWatch } from './task-watch.js';
import { TaskActivityRepository } from './task-activity.repository.js';
import { TaskActivityService } from './task-activity.service.js';
import { TaskRetention } from './task-retention.js';
import { TaskRetentionRepository } from './task-retention.repository.js';
import type { OutputSchemaCheck } from '../lib/schema-checker.js';

/**
 * The task engine's use cases in three parts, each used directly by the routes and domains that need it; the
 * dependencies go one way: control reads through queries, and neither knows submissions.
 */
export interface TaskParts {
  /** Submitting (invoke, webhooks, sub-agents, schedules, MCP, A2A, reported runs) and a submitter's wait. */
  submissions: TaskSubmissions;
  /** Reading: one task, lists, thread, trace (whole or followed live), visibility. */
  queries: TaskQueries;
  /** Stop, delete, approve, reject. */
  control: TaskControl;
}

export interface TasksModule {
  tasks: TaskParts;
  worker: TaskWorker;
  signals: TaskSignals;
  activity: TaskActivityService;
  /** The retention sweep of the worker role (AGENTRY_TASK_RETENTION_DAYS; idle when 0). */
  retention: TaskRetention;
  /** Where asynchronous webhook calls' new tasks wait (task-inbox.ts); the file sweep settles it before judging uploads. */
  inbox: TaskInbox;
}

/** Wires the tasks domain for the composition root: one signal hub shared by the parts and the worker. */
export function createTasksModule(d: {
  db: Db;
  config: Config;
  clock: Clock;
  log: Logger;
  secretBox: SecretBox;
  agents: TaskAgentDirectory;
  runner: TaskRunner;
  notifier?: TaskEndNotifier;
  preAuth?: InvocationPreAuth;
  /** Refuses an invocation's output_schema the run could not enforce (lib/schema-checker.ts). */
  checkOutputSchema?: OutputSchemaCheck;
  /** Counts the runs stopped by their deadline (/metrics). */
  onRunTimedOut?: () => void;
  /** Counts the invocations answered with an earlier event's task (duplication_prevention; /metrics). */
  onDuplicateEvent?: () => void;
  /** Counts the tasks the retention sweep deleted (/metrics). */
  onTasksExpired?: (count: number) => void;
  /** Removes the blobs of uploads deleted with tasks, after the commit (src/files/file-disposal.ts). */
  removeBlobs?: RemoveReleasedBlobs;
  /** How far a thread's session summary reaches (the memory domain's store, through the runtime's hooks). */
  summaryCoverage?: SummaryCoverage;
}): TasksModule {
  const repo = new TasksRepository(d.db);
  const queue = new TaskQueueRepository(d.db);
  const signals = new TaskSignals(d.log, d.db.dialect === 'postgres' ? (ch, payloads) => queue.notify(ch, payloads) : undefined, d.db.notifications);
  // Entries moved into `tasks` by an API read are claimable: wake the workers (in other processes too).
  const inbox = new TaskInbox(new TaskInboxRepository(d.db, repo), () => signals.publish({ kind: 'queued' }));
  const worker = new TaskWorker({
    queue,
    inbox,
    tasks: repo,
    signals,
    agents: d.agents,
    runner: d.runner,
    secretBox: d.secretBox,
    clock: d.clock,
    log: d.log,
    concurrency: d.config.worker.concurrency,
    maxPausedRuns: d.config.worker.maxPausedRuns,
    maxPausedRunsPerOrg: d.config.worker.maxPausedRunsPerOrg,
    leaseMs: d.config.worker.leaseMs,
    runTimeoutMs: d.config.worker.runTimeoutMs,
    approvalTimeoutMs: d.config.worker.approvalTimeoutMs,
    onRunTimedOut: d.onRunTimedOut,
    notifier: d.notifier,
    summaryCoverage: d.summaryCoverage,
  });
  // The worker takes awaited submissions straight from submission while it runs (a worker role in this process),
  // and signals their outcome to the waits of this process with the row (task-watch.ts).
  const watch = new TaskWatch(repo, signals, worker);
  const submissions = new TaskSubmissions({ repo, agents: d.agents, signals, secretBox: d.secretBox, clock: d.clock, inbox, watch, localSlots: worker, runStart: d.db.dialect === 'postgres' ? 'after-send' : 'now', notifier: d.notifier, preAuth: d.preAuth, checkOutputSchema: d.checkOutputSchema, onDuplicateEvent: d.onDuplicateEvent });
  const queries = new TaskQueries({ repo, agents: d.agents, inbox, watch });
  const control = new TaskControl({ repo, agents: d.agents, signals, clock: d.clock, notifier: d.notifier, queries, removeBlobs: d.removeBlobs });
  const tasks: TaskParts = { submissions, queries, control };
  const activity = new TaskActivityService(new TaskActivityRepository(d.db), d.agents, d.clock);
  const retention = new TaskRetention({
    repo: new TaskRetentionRepository(d.db),
    clock: d.clock,
    log: d.log,
    days: d.config.taskRetentionDays,
    onExpired: d.onTasksExpired,
    removeBlobs: d.removeBlobs,
  });
  return { tasks, worker, signals, activity, retention, inbox };
}
