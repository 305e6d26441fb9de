import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { ScheduleFiring } from './schedule-firing.js';
import type { SchedulesRepository } from './schedules.repository.js';

/** Due schedules read per scan; a full batch scans again at once. */
const BATCH = 100;

/**
 * The scheduler of the worker role: every `pollMs` it reads the due schedules of every organization and fires each
 * (schedule-firing.ts). Every worker process runs one; the claim makes that safe, so there is no leader to elect
 * and no single point of failure. Polling, not a timer per schedule: a schedule made or changed by another process
 * is seen within one period without any signal between processes, and the scan is one indexed query.
 */
export class ScheduleScheduler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = true;

  constructor(
    private readonly repo: SchedulesRepository,
    private readonly firing: ScheduleFiring,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly pollMs: number,
  ) {}

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One scan: fires every due occurrence; returns how many this process fired (started or recorded as skipped). */
  async tick(): Promise<number> {
    let fired = 0;
    for (;;) {
      const due = await this.repo.due(this.clock.now(), BATCH);
      let settled = 0;
      for (const row of due) {
        try {
          if ((await this.firing.fire(row, this.clock.now())) !== 'lost') fired++;
          settled++;
        } catch (err) {
          // Left due: the next scan tries again. One schedule's failure never stops the others.
          this.log.error({ err, schedule_id: row.id, organization_id: row.organization_id }, 'schedule occurrence failed; retrying on the next scan');
        }
      }
      // A full batch that all failed would be read again as it is: wait for the next period instead.
      if (due.length < BATCH || this.stopped || settled === 0) return fired;
    }
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .catch((err) => this.log.error({ err }, 'schedule scan failed'))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.schedule(this.pollMs);
        });
    }, delay);
  }
}
