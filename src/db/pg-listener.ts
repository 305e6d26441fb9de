import pg from 'pg';
import type { Logger } from '../lib/logger.js';

export interface PgListenerOptions {
  url: string;
  channel: string;
  log: Logger;
  /** Names the notifications in log lines ("job", "task"). */
  what: string;
  onNotification(payload: string): void;
  /** After each (re)connect: whatever was missed while disconnected. */
  onConnected(): void;
  /** Reconnect only while this holds (default: always, until closed). */
  wanted?(): boolean;
}

/**
 * One dedicated LISTEN connection on PostgreSQL that reconnects after a second when it is lost (or cannot be
 * opened). Notifications are hints only: their users poll as well, so the gap while reconnecting delays work at most.
 */
export class PgListener {
  private client?: pg.Client;
  private connecting?: Promise<void>;
  private closed = false;
  private reconnectTimer?: NodeJS.Timeout;

  constructor(private readonly o: PgListenerOptions) {}

  /** Connects unless connected (or connecting); resolves once listening or once the attempt failed. */
  start(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const { channel, log, what } = this.o;
    const client = new pg.Client({ connectionString: this.o.url });
    client.on('notification', (msg) => {
      if (msg.channel === channel) this.o.onNotification(msg.payload ?? '');
    });
    client.on('error', (err) => {
      log.warn({ err }, `${what} notification connection lost; reconnecting`);
      if (this.client === client) this.client = undefined;
      client.end().catch(() => {});
      this.scheduleReconnect();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.client = client;
      this.o.onConnected();
    } catch (err) {
      log.warn({ err }, `cannot listen for ${what} notifications; polling meanwhile`);
      client.end().catch(() => {});
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer || (this.o.wanted && !this.o.wanted())) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.start();
    }, 1000);
  }
}
