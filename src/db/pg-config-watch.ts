import { CONFIG_CHANNEL } from './config-change.js';
import type { ChannelSubscription, PgNotifications } from './pg-notifications.js';

/**
 * Db.configVersion on PostgreSQL. The configuration tables notify CONFIG_CHANNEL on commit (migration 0011); this
 * process listens on its notification connection (pg-notifications.ts), from the first ask, and counts:
 * - notifications: any process's committed change, seen as soon as the notification arrives (well under a
 *   millisecond on one host; a change committed elsewhere can be served stale for that long);
 * - this process's own changes, counted by the pool when the statement runs and again when its transaction ends
 *   (`localChange`), so the process reads its own writes at once;
 * - connections: while the listener is down nothing is known (undefined: callers read through), and each new
 *   connection starts a new generation, so nothing cached before a gap is trusted after it.
 */
export class PgConfigWatch {
  private readonly listener: ChannelSubscription;
  private live = false;
  private generation = 0;
  private notified = 0;
  private local = 0;
  /** The counts `text` was built from. */
  private seen: [number, number, number] = [-1, -1, -1];
  private text = '';

  constructor(notifications: PgNotifications) {
    this.listener = notifications.subscribe({
      channel: CONFIG_CHANNEL,
      what: 'configuration change',
      onNotification: () => this.notified++,
      onConnected: () => {
        this.generation++;
        this.live = true;
      },
      onDisconnected: () => {
        this.live = false;
      },
    });
  }

  version(): string | undefined {
    if (!this.live) {
      void this.listener.start();
      return undefined;
    }
    // Built only when a count moved: caches compare it on every lookup (two per webhook call).
    if (this.generation !== this.seen[0] || this.notified !== this.seen[1] || this.local !== this.seen[2]) {
      this.seen = [this.generation, this.notified, this.local];
      this.text = this.seen.join(':');
    }
    return this.text;
  }

  localChange(): void {
    this.local++;
  }

  close(): Promise<void> {
    return this.listener.close();
  }
}
