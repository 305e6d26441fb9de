import type pg from 'pg';
import { pgModule } from './pg-module.js';
import type { Logger } from '../lib/logger.js';

export interface ChannelListener {
  channel: string;
  /** Names the notifications in log lines ("job", "task"). */
  what: string;
  onNotification(payload: string): void;
  /** Once the channel is listened to, and after each reconnect: whatever was missed while it was not. */
  onConnected(): void;
  /** When an established connection is lost (notifications may be missed until the next onConnected). */
  onDisconnected?(): void;
  /** Keep reconnecting for this listener only while this holds (default: always, until closed). */
  wanted?(): boolean;
}

export interface ChannelSubscription {
  /** Listens unless already listening; resolves once listening or once the attempt failed (it is then retried). */
  start(): Promise<void>;
  close(): Promise<void>;
}

const RECONNECT_MS = 1000;
const MEANWHILE = 'meanwhile waiters and workers poll, and cached configuration is read from the database';

interface Subscriber {
  l: ChannelListener;
  /** Heard on the current connection (onConnected was called for it). */
  live: boolean;
}

/**
 * The process's one LISTEN connection on PostgreSQL, shared by every channel it listens to (tasks, jobs,
 * configuration changes). One connection, not one per channel: PostgreSQL wakes every backend that listens on
 * anything in the database for each NOTIFY, whatever its channel, so each extra listening connection is one more
 * backend woken per notification (and one more connection held) in every process.
 *
 * It reconnects a second after the connection is lost (or cannot be opened) while any started subscriber still
 * wants it. Users must stay correct without it: task and job wake-ups poll as well, and configuration caches read
 * through while it is down (onDisconnected).
 */
export class PgNotifications {
  private client?: pg.Client;
  private connecting?: Promise<void>;
  private reconnectTimer?: NodeJS.Timeout;
  private closed = false;
  private readonly subscribers = new Set<Subscriber>();
  /** Channels a LISTEN was sent for on the current connection. */
  private listened = new Map<string, Promise<void>>();

  constructor(
    private readonly url: string,
    private readonly log: Logger,
  ) {}

  subscribe(l: ChannelListener): ChannelSubscription {
    const s: Subscriber = { l, live: false };
    return {
      start: async () => {
        if (this.closed) return;
        this.subscribers.add(s);
        if (this.client && s.live) return;
        await this.ensure();
      },
      close: async () => {
        if (!this.subscribers.delete(s)) return;
        if (s.live) l.onDisconnected?.();
        s.live = false;
        const client = this.client;
        if (client && ![...this.subscribers].some((o) => o.l.channel === l.channel)) {
          this.listened.delete(l.channel);
          await client.query(`UNLISTEN ${l.channel}`).catch(() => undefined);
        }
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.dropConnection();
    await client?.end().catch(() => undefined);
  }

  /** Connects if need be, then listens for every started subscriber not yet heard on this connection. */
  private async ensure(): Promise<void> {
    if (!this.client) {
      // A retry is already scheduled: callers asking meanwhile (a configuration read per request) must not turn a
      // database outage into a connection attempt per request.
      if (this.reconnectTimer) return;
      this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
      await this.connecting;
    }
    const client = this.client;
    if (!client) return;
    for (const s of this.subscribers) {
      const first = !s.live;
      s.live = true;
      try {
        // Awaited even when another caller sent it: each caller resolves only once its channel is listened to.
        await this.listen(client, s.l.channel);
      } catch (err) {
        this.lost(client, err);
        return;
      }
      // Only if the connection it listened on is still the one in use (else the reconnect calls it).
      if (first && this.client === client && s.live && this.subscribers.has(s)) s.l.onConnected();
    }
  }

  /** One LISTEN per channel and connection, however many subscribers ask for it at once. */
  private listen(client: pg.Client, channel: string): Promise<void> {
    let p = this.listened.get(channel);
    if (!p) {
      p = client.query(`LISTEN ${channel}`).then(() => undefined);
      this.listened.set(channel, p);
    }
    return p;
  }

  private async connect(): Promise<void> {
    // TCP keep-alive: a peer that vanished without a FIN is noticed, not listened to forever.
    const client = new (pgModule().Client)({ connectionString: this.url, keepAlive: true });
    client.on('notification', (msg) => {
      for (const s of this.subscribers) if (s.live && s.l.channel === msg.channel) s.l.onNotification(msg.payload ?? '');
    });
    client.on('error', (err) => this.lost(client, err));
    try {
      await client.connect();
      if (this.closed) {
        await client.end();
        return;
      }
      this.listened = new Map();
      this.client = client;
    } catch (err) {
      this.log.warn({ err, notifications: this.carried() }, `cannot open the notification connection; retrying (${MEANWHILE})`);
      client.end().catch(() => undefined);
      this.scheduleReconnect();
    }
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.log.warn({ err, notifications: this.carried() }, `notification connection lost; reconnecting (${MEANWHILE})`);
    this.dropConnection();
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private dropConnection(): void {
    this.client = undefined;
    this.listened = new Map();
    for (const s of this.subscribers) {
      if (!s.live) continue;
      s.live = false;
      s.l.onDisconnected?.();
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    if (![...this.subscribers].some((s) => !s.l.wanted || s.l.wanted())) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.ensure();
    }, RECONNECT_MS);
  }

  /** What the connection carries, for log lines ("task", "job", "configuration change"). */
  private carried(): string[] {
    return [...new Set([...this.subscribers].map((s) => s.l.what))];
  }
}
