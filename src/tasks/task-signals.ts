import { EventEmitter } from 'node:events';
import type { ChannelSubscription, PgNotifications } from '../db/pg-notifications.js';
import type { Logger } from '../lib/logger.js';
import type { TaskRow } from './tasks.repository.js';

/**
 * Wake-ups between the parts of the tasks domain: "a task was queued" (workers), "a task changed" (waiters,
 * event followers, the worker that runs it: stop and approval decisions). In-process listeners hear them at
 * once; on PostgreSQL they cross processes through LISTEN/NOTIFY. Signals are only hints: every listener
 * re-reads the database, and polls as a fallback, so a lost notification delays but never loses anything.
 *
 * A task signal says whether the task's status (or a decision on it) changed, or only its trace grew: a run
 * appends a dozen events, and waiters for the final status and the worker's stop check would otherwise re-read
 * the task after each of them.
 */
export type TaskSignal =
  /**
   * `inbox`: the new task is in the task inbox (task-inbox.ts), which the worker settles before claiming.
   * `interleaved`: its organization is not the previous entry's, so the inbox may hold several organizations'
   * tasks and the worker settles all of it, not only its oldest entries (fair claims: task-claimer.ts).
   */
  | { kind: 'queued'; inbox?: boolean; interleaved?: boolean }
  | {
      kind: 'task';
      organizationId: string;
      taskId: string;
      statusChanged: boolean;
      /** The task as the publisher committed it, when it has it: in-process only (never sent over NOTIFY). */
      row?: TaskRow;
    };

/** A signal as another process sent it: checked field by field before it is believed. */
type WireSignal = { kind?: unknown; inbox?: unknown; interleaved?: unknown; organizationId?: unknown; taskId?: unknown; statusChanged?: unknown } | null;

const CHANNEL = 'agentry_tasks';
/** Notifications for one task are coalesced over this window: a streaming run emits an event per token. */
const NOTIFY_COALESCE_MS = 20;
/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more (a signal is ~200). */
const PAYLOAD_MAX = 7900;

export class TaskSignals {
  private readonly bus = new EventEmitter();
  private readonly listener?: ChannelSubscription;
  private closed = false;
  private pendingNotify = new Map<string, TaskSignal>();
  private flushTimer?: NodeJS.Timeout;
  /** Starts this instance's own NOTIFY payloads, which its listeners already heard in-process. */
  private readonly prefix = `{"from":"${Math.random().toString(36).slice(2)}","signals":[`;

  /**
   * @param notify sends NOTIFY payloads, in one round trip, through the shared pool (PostgreSQL only)
   * @param notifications the process's LISTEN connection (PostgreSQL only)
   */
  constructor(
    private readonly log: Logger,
    private readonly notify?: (channel: string, payloads: string[]) => Promise<void>,
    notifications?: PgNotifications,
  ) {
    this.bus.setMaxListeners(0);
    if (notifications) {
      this.listener = notifications.subscribe({
        channel: CHANNEL,
        what: 'task',
        onNotification: (payload) => this.received(payload),
        // Anything missed while disconnected: listeners re-read on any signal.
        onConnected: () => this.bus.emit('signal', { kind: 'queued', inbox: true, interleaved: true }),
        wanted: () => this.bus.listenerCount('signal') > 0,
      });
    }
  }

  /** True when other processes' signals arrive here; otherwise listeners must poll to see them. */
  get crossProcess(): boolean {
    return !!this.listener;
  }

  /** Subscribes; returns the unsubscribe function. Starts listening on PostgreSQL on first use. */
  on(listener: (s: TaskSignal) => void): () => void {
    this.bus.on('signal', listener);
    void this.listener?.start();
    return () => this.bus.off('signal', listener);
  }

  /** `local`: only this process's listeners can care (nobody elsewhere knows the task yet); no NOTIFY. */
  publish(signal: TaskSignal, opts: { local?: boolean } = {}): void {
    this.bus.emit('signal', signal);
    if (!this.notify || this.closed || opts.local) return;
    const key = signal.kind === 'queued' ? 'queued' : `${signal.organizationId}\u0000${signal.taskId}`;
    const earlier = this.pendingNotify.get(key);
    // Coalesced per task: the merged signal changed the status if any of its parts did (and the queue's, whether
    // any of them went to the inbox, or interleaved organizations there).
    if (earlier?.kind === 'task' && signal.kind === 'task' && earlier.statusChanged) this.pendingNotify.set(key, { ...signal, statusChanged: true });
    else if (earlier?.kind === 'queued' && signal.kind === 'queued') this.pendingNotify.set(key, mergedQueued(earlier, signal));
    else this.pendingNotify.set(key, signal);
    this.flushTimer ??= setTimeout(() => void this.flush(), NOTIFY_COALESCE_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      await this.flush();
    }
    await this.listener?.close();
  }

  private async flush(): Promise<void> {
    this.flushTimer = undefined;
    const signals = [...this.pendingNotify.values()];
    this.pendingNotify.clear();
    if (!signals.length) return;
    try {
      await this.notify!(CHANNEL, this.payloads(signals));
    } catch (err) {
      this.log.warn({ err }, 'task notification failed; listeners will poll');
    }
  }

  /**
   * The signals of one flush, several to a NOTIFY payload (under PostgreSQL's 8,000-byte limit). One notification per
   * task cost every listening process a message to parse, this one included (it hears its own NOTIFYs, and drops
   * them): ~4% of the service's CPU per synchronous run under load, measured. A carried row stays in-process (JSON
   * leaves out undefined): payloads are small, and may be logged.
   */
  private payloads(signals: TaskSignal[]): string[] {
    const out: string[] = [];
    let batch: string[] = [];
    let size = 0;
    const close = () => out.push(`${this.prefix}${batch.join(',')}]}`);
    for (const s of signals) {
      const one = JSON.stringify({ ...s, row: undefined });
      const bytes = Buffer.byteLength(one) + 1;
      if (batch.length && size + bytes > PAYLOAD_MAX - this.prefix.length) {
        close();
        batch = [];
        size = 0;
      }
      batch.push(one);
      size += bytes;
    }
    close();
    return out;
  }

  private received(payload: string): void {
    // Its own NOTIFYs come back to this process, whose listeners heard them in-process: dropped before parsing.
    if (!payload || payload.startsWith(this.prefix)) return;
    try {
      const p = JSON.parse(payload) as { signals?: unknown } & WireSignal;
      // One signal per payload is how processes of earlier versions send them (a rolling upgrade).
      for (const s of (Array.isArray(p.signals) ? p.signals : [p]) as WireSignal[]) {
        if (s?.kind === 'queued') this.bus.emit('signal', s.interleaved === true ? { kind: 'queued', inbox: true, interleaved: true } : { kind: 'queued', inbox: s.inbox === true });
        else if (typeof s?.organizationId === 'string' && typeof s.taskId === 'string')
          this.bus.emit('signal', { kind: 'task', organizationId: s.organizationId, taskId: s.taskId, statusChanged: s.statusChanged !== false });
      }
    } catch {
      // A malformed payload is someone else's; ignore it.
    }
  }
}

type QueuedSignal = Extract<TaskSignal, { kind: 'queued' }>;

/** Two queued signals as one: the earlier object itself when it says all the later one does (no allocation per call). */
function mergedQueued(earlier: QueuedSignal, later: QueuedSignal): QueuedSignal {
  if ((earlier.inbox || !later.inbox) && (earlier.interleaved || !later.interleaved)) return earlier;
  return { kind: 'queued', inbox: !!(earlier.inbox || later.inbox), interleaved: !!(earlier.interleaved || later.interleaved) };
}
