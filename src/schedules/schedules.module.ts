import type { AgentsService } from '../agents/agents.service.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Runtime } from '../runtime/runtime.js';
import { ScheduleToolProvider } from '../runtime/tools/schedule.tools.js';
import type { TaskParts } from '../tasks/tasks.module.js';
import { ScheduleFiring } from './schedule-firing.js';
import { ScheduleScheduler } from './schedule.scheduler.js';
import { SchedulesRepository } from './schedules.repository.js';
import { SchedulesService } from './schedules.service.js';
import type { OutputSchemaCheck } from '../lib/schema-checker.js';

/** Schedules (issue 23): CRUD and the agent's own schedules (the `schedule` tool kind); the scheduler that fires them. */
export function createSchedulesModule(d: {
  db: Db;
  agents: AgentsService;
  /** Occurrences are submitted with their claim; a schedule's tasks are listed through queries. */
  tasks: Pick<TaskParts, 'submissions' | 'queries'>;
  runtime: Runtime;
  clock: Clock;
  log: Logger;
  pollMs: number;
  /** Refuses an invocation's output_schema the runs could not enforce (lib/schema-checker.ts), when a schedule is written. */
  checkOutputSchema?: OutputSchemaCheck;
}): { schedules: SchedulesService; scheduler: ScheduleScheduler } {
  const repo = new SchedulesRepository(d.db);
  const agents = {
    exists: (org: string, id: string) => d.agents.exists(org, id),
    developerAccess: async (org: string, id: string) => (await d.agents.find(org, id))?.developerAccess,
  };
  const schedules = new SchedulesService(repo, agents, d.tasks.queries, d.clock, d.checkOutputSchema);
  const scheduler = new ScheduleScheduler(repo, new ScheduleFiring(repo, d.tasks.submissions, agents), d.clock, d.log, d.pollMs);
  d.runtime.tools.register('schedule', new ScheduleToolProvider(schedules));
  return { schedules, scheduler };
}
