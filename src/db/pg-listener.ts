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
  /** When an established connection is lost (notifications may be missed until the next onConnected). */
  onDisconnected?(): void;
  /** What happens until it is listening again, for the log line (default: "polling meanwhile"). */
  meanwhile?: string;
  /** Reconnect only while this holds (default: always, until closed). */
  wanted?(): boolean;
}

/**
 * One dedicated LISTEN connection on PostgreSQL that reconnects after a second when it is lost (or cannot be
 * opened). Users must stay correct without it: task and job wake-ups poll as well, and configuration caches read
 * through while it is down (onDisconnected).
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
    if (c) this.o.onDisconnected?.();
    await c?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const { channel, log, what } = this.o;
    // TCP keep-alive: a peer that vanished without a FIN is noticed, not listened to forever.
    const client = new pg.Client({ connectionString: this.o.url, keepAlive: true });
    client.on('notification', (msg) => {
      if (msg.channel === channel) this.o.onNotification(msg.payload ?? '');
    });
    client.on('error', (err) => {
      log.warn({ err }, `${what} notification connection lost; reconnecting`);
      if (this.client === client) {
        this.client = undefined;
        this.o.onDisconnected?.();
      }
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
      log.warn({ err }, `cannot listen for ${what} notifications; ${this.o.meanwhile ?? 'polling meanwhile'}`);
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
