import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { raceAbort } from '../lib/abort.js';
import type { Startable } from '../lib/lifecycle.js';
import type { Clock } from '../lib/clock.js';
import { randomToken } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import { isEgressRefused } from '../net/index.js';
import { WakeableLoop } from '../lib/wakeable-loop.js';
import type { Channel } from './notification-outbox.js';
import type { AttemptResult, DeliveryRow, NotificationsRepository } from './notifications.repository.js';
import type { ChannelSender, SendOutcome } from './channels/channel.js';

export interface DispatcherOptions {
  /** Deliveries in flight at once, per process. */
  concurrency: number;
  /** One attempt's deadline (connect, send, answer). */
  timeoutMs: number;
  /** First retry after about this long; doubled on every failure, with jitter, up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Idle polling: due retries, rows committed by other processes, claims of dispatchers that died. */
  pollMs: number;
}

/**
 * How long a claim holds a row: the attempt's deadline, then as long again (at most 30 s) for recording its outcome.
 * A dispatcher that died mid-attempt leaves its row to another one (or to itself after a restart) after that.
 */
function leaseMs(timeoutMs: number): number {
  return timeoutMs + Math.min(30_000, timeoutMs) + 1000;
}
const ERROR_CHARS = 1000;

/**
 * The worker role's notification dispatcher: claims due outbox rows with a lease (so two processes never send the
 * same row at once), sends each through its channel, records every attempt, and schedules a retry with exponential
 * backoff and jitter (or the receiver's Retry-After) until the row's give-up time. It runs beside the task worker
 * and never holds a task slot: a slow receiver delays only its own delivery, within `concurrency` and `timeoutMs`.
 */
export class NotificationDispatcher implements Startable {
  private readonly owner = `${hostname()}:${process.pid}:${randomToken(6)}`;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly loop = new WakeableLoop({
    pass: () => this.claim(),
    intervalMs: () => this.opts.pollMs,
    onError: (err) => this.log.error({ err }, 'notification claim failed; retrying'),
  });

  constructor(
    private readonly repo: NotificationsRepository,
    private readonly senders: Record<Channel, ChannelSender>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly opts: DispatcherOptions,
    private readonly sqlite: boolean,
  ) {}

  async start(): Promise<void> {
    this.loop.start();
  }

  async stop(): Promise<void> {
    if (!this.loop.active) return;
    const halted = this.loop.halt();
    this.stopping.abort(new Error('The notification dispatcher is stopping'));
    await halted;
    await Promise.all(this.inFlight.values());
  }

  /** Rows were committed in this process: look now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  private async claim(): Promise<void> {
    for (;;) {
      const free = this.opts.concurrency - this.inFlight.size;
      if (!this.loop.active || free <= 0) return;
      const now = this.clock.now();
      if (this.sqlite && !(await this.repo.hasDue(now))) return;
      const token = `${this.owner}:${randomToken(6)}`;
      const rows = await this.repo.claimDue(token, now, leaseMs(this.opts.timeoutMs), free);
      for (const row of rows) {
        const key = `${row.organization_id}\u0000${row.id}`;
        const p = this.deliver(row, token)
          .catch((err) => this.log.error({ err, delivery_id: row.id }, 'notification delivery could not be recorded'))
          .finally(() => {
            this.inFlight.delete(key);
            this.loop.wake();
          });
        this.inFlight.set(key, p);
      }
      if (rows.length < free) return;
    }
  }

  private async deliver(row: DeliveryRow, token: string): Promise<void> {
    const startedAt = this.clock.now();
    const t0 = performance.now();
    const signal = AbortSignal.any([AbortSignal.timeout(this.opts.timeoutMs), this.stopping.signal]);
    let outcome: SendOutcome;
    try {
      const sender = this.senders[row.channel as Channel];
      if (!sender) throw new Error(`unknown channel ${row.channel}`);
      // A sender that ignores its signal (a stuck socket) is not waited for beyond it.
      outcome = await raceAbort(sender.send(row, JSON.parse(row.target), signal), signal);
    } catch (err) {
      outcome = failure(err, this.stopping.signal.aborted, signal.aborted);
    }
    const latency = Math.round(performance.now() - t0);
    const now = this.clock.now();
    const result = this.next(row, outcome, now, { started_at: startedAt, latency_ms: latency });
    if (!(await this.repo.recordAttempt(row, token, result, now))) {
      this.log.warn({ delivery_id: row.id }, 'notification attempt not recorded: its claim had run out');
    } else if (result.status === 'failed') {
      this.log.warn({ delivery_id: row.id, task_id: row.task_id, channel: row.channel, error: result.lastError }, 'notification given up');
    }
  }

  /** The delivery's next state after an attempt: delivered, retried later, or given up. */
  private next(row: DeliveryRow, o: SendOutcome, now: number, timing: { started_at: number; latency_ms: number }): AttemptResult {
    const code = o.statusCode ?? null;
    if (o.ok) {
      return { status: 'delivered', nextAttemptAt: now, lastError: null, deliveredAt: now, attempt: { ...timing, outcome: 'delivered', status_code: code, error: null } };
    }
    const error = o.error.slice(0, ERROR_CHARS);
    const attempts = Number(row.attempts) + 1;
    const stopping = this.stopping.signal.aborted && o.retry;
    // Stopping is no fault of the receiver's: tried again at once by whoever runs next.
    // A receiver's Retry-After can put the next try later than the backoff, never sooner: `Retry-After: 0` (or a date
    // in the past) on every answer had the dispatcher retry at once, ~150 times a second, until the give-up time.
    // The give-up time still bounds a long one.
    const backoff = stopping ? 0 : this.backoff(attempts);
    const delay = stopping ? 0 : o.retryAfterMs !== undefined ? Math.max(o.retryAfterMs, backoff) : backoff;
    const at = now + delay;
    if (!o.retry || at > Number(row.give_up_at)) {
      const why = o.retry ? `given up after ${attempts} attempts: ${error}` : error;
      return { status: 'failed', nextAttemptAt: now, lastError: why, deliveredAt: null, attempt: { ...timing, outcome: 'failed', status_code: code, error } };
    }
    return { status: 'pending', nextAttemptAt: at, lastError: error, deliveredAt: null, attempt: { ...timing, outcome: 'retry', status_code: code, error } };
  }

  /** Exponential backoff with jitter: base * 2^(n-1), capped, then a random 50-100% of it (spreads retries out). */
  private backoff(attempts: number): number {
    const ceiling = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** Math.min(30, attempts - 1));
    return Math.round(ceiling * (0.5 + Math.random() * 0.5));
  }
}

function failure(err: unknown, stopping: boolean, timedOut: boolean): SendOutcome {
  if (isEgressRefused(err)) return { ok: false, retry: false, error: (err as Error).message };
  if (stopping) return { ok: false, retry: true, error: 'The dispatcher stopped during the attempt' };
  if (timedOut) return { ok: false, retry: true, error: 'The receiver did not answer in time' };
  const e = err as Error & { cause?: Error & { code?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return { ok: false, retry: true, error: `${e.message ?? String(err)}${cause ? ` (${cause})` : ''}` };
}

