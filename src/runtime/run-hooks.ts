import type { Logger } from '../lib/logger.js';
import type { RunOutcome, RunRequest } from './task-runner.js';

/**
 * Hooks through which another domain (memory) takes part in runs without the runtime knowing its tables:
 * - `summaries`: where session summaries of long threads are kept (agno_settings.session_summaries);
 * - observers: told of each finished run, after the runner has its outcome. An observer must return at once and
 *   do its work in the background (memory extraction must not delay the task's answer).
 */
export interface SessionSummaryStore {
  get(organizationId: string, taskId: string): Promise<{ coveredRun: number; summary: string } | undefined>;
  put(organizationId: string, taskId: string, coveredRun: number, summary: string): Promise<void>;
}

export interface RunObserver {
  finished(req: RunRequest, outcome: RunOutcome): void;
}

export class RunHooks {
  summaries: SessionSummaryStore | undefined;
  private readonly observers = new Map<string, RunObserver>();

  constructor(private readonly log: Logger) {}

  observe(name: string, observer: RunObserver): void {
    this.observers.set(name, observer);
  }

  notify(req: RunRequest, outcome: RunOutcome): void {
    for (const [name, o] of this.observers) {
      try {
        o.finished(req, outcome);
      } catch (err) {
        this.log.warn({ err, observer: name, task_id: req.task.id }, 'run observer failed');
      }
    }
  }
}
