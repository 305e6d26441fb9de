import { canSeeAgent } from '../auth/agent-access.js';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { DAY_MS, type TaskActivityRepository } from './task-activity.repository.js';
import type { TaskAgentDirectory } from './task-agents.js';

export interface TaskActivity {
  agent_id: string;
  days: number;
  /** One entry per UTC day, oldest first, days without tasks included (a chart needs no gaps). */
  buckets: { date: string; tasks: number; failed: number }[];
}

/** Tasks and failures over time for one agent: what the console's activity chart draws. */
export class TaskActivityService {
  constructor(
    private readonly repo: TaskActivityRepository,
    private readonly agents: TaskAgentDirectory,
    private readonly clock: Clock,
  ) {}

  async perDay(organizationId: string, agentId: string, days: number, viewer?: Principal): Promise<TaskActivity> {
    const access = await this.agents.accessOf(organizationId, agentId);
    if (!access || (viewer && !canSeeAgent(viewer, access))) throw AppError.notFound('Agent');
    const today = Math.floor(this.clock.now() / DAY_MS);
    const first = today - days + 1;
    const counts = new Map((await this.repo.perDay(organizationId, agentId, first * DAY_MS)).map((c) => [c.day, c]));
    const buckets = [];
    for (let d = first; d <= today; d++) {
      const c = counts.get(d);
      buckets.push({ date: new Date(d * DAY_MS).toISOString().slice(0, 10), tasks: c?.tasks ?? 0, failed: c?.failed ?? 0 });
    }
    return { agent_id: agentId, days, buckets };
  }
}
