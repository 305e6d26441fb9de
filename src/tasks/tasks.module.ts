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
import { TaskWorker } from './task.worker.js';
import { TasksRepository } from './tasks.repository.js';
import { TasksService } from './tasks.service.js';
import { TaskActivityRepository } from './task-activity.repository.js';
import { TaskActivityService } from './task-activity.service.js';

export interface TasksModule {
  tasks: TasksService;
  worker: TaskWorker;
  signals: TaskSignals;
  activity: TaskActivityService;
}

/** Wires the tasks domain for the composition root: one signal hub shared by the service and the worker. */
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
    leaseMs: d.config.worker.leaseMs,
    notifier: d.notifier,
  });
  // The worker takes awaited submissions straight from the service while it runs (a worker role in this process).
  const tasks = new TasksService({ repo, agents: d.agents, signals, secretBox: d.secretBox, clock: d.clock, inbox, localSlots: worker, runStart: d.db.dialect === 'postgres' ? 'after-send' : 'now', notifier: d.notifier, preAuth: d.preAuth });
  const activity = new TaskActivityService(new TaskActivityRepository(d.db), d.agents, d.clock);
  return { tasks, worker, signals, activity };
}
