import { sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../db/database.js';
import type { Logger } from '../lib/logger.js';

const CHANNEL = 'agentry_jobs';

/**
 * "A job was queued", across processes on PostgreSQL (LISTEN/NOTIFY), so a worker process starts indexing a document
 * that an API process just accepted without waiting for its next poll. Only a hint: workers poll anyway, so a lost
 * notification (or SQLite, where the worker usually shares the process) delays work by a poll at most.
 */
export class JobWakeups {
  private client?: pg.Client;
  private closed = true;
  private reconnectTimer?: NodeJS.Timeout;
  private onWake: () => void = () => {};

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
    if (this.db.dialect !== 'postgres' || !this.db.url) return;
    this.onWake = onWake;
    this.closed = false;
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.db.url });
    client.on('notification', (msg) => {
      if (msg.channel === CHANNEL) this.onWake();
    });
    client.on('error', (err) => {
      this.log.warn({ err }, 'job notification connection lost; reconnecting');
      if (this.client === client) this.client = undefined;
      client.end().catch(() => {});
      this.scheduleReconnect();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      // Anything queued while disconnected.
      this.onWake();
    } catch (err) {
      this.log.warn({ err }, 'cannot listen for job notifications; polling meanwhile');
      client.end().catch(() => {});
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (!this.closed && !this.client) void this.connect();
    }, 1000);
  }
}
