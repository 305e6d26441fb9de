import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { ChannelSubscription } from '../db/pg-notifications.js';
import type { Logger } from '../lib/logger.js';

const CHANNEL = 'agentry_jobs';

/**
 * "A job was queued", across processes on PostgreSQL (LISTEN/NOTIFY), so a worker process starts indexing a document
 * that an API process just accepted without waiting for its next poll. Only a hint: workers poll anyway, so a lost
 * notification (or SQLite, where the worker usually shares the process) delays work by a poll at most.
 */
export class JobWakeups {
  private listener?: ChannelSubscription;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /** Tells listening workers (in any process) that a job was committed. */
  async notify(): Promise<void> {
    if (this.db.dialect !== 'postgres') return;
    try {
      await sql`select pg_notify(${CHANNEL}, '')`.execute(this.db.kysely);
    } catch (err) {
      this.log.warn({ err }, 'job notification failed; workers will poll');
    }
  }

  /** Starts listening (PostgreSQL only); `onWake` runs on every notification and after each reconnect. */
  async listen(onWake: () => void): Promise<void> {
    if (!this.db.notifications) return;
    // After a reconnect: anything queued while disconnected.
    this.listener = this.db.notifications.subscribe({ channel: CHANNEL, what: 'job', onNotification: onWake, onConnected: onWake });
    await this.listener.start();
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }
}
