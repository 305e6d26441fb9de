import { AppError } from '../errors.js';
import { setBounded } from '../lib/bounded-map.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { RateBucketsRepository } from './rate-buckets.repository.js';

export interface BucketSpec {
  /** Refill rate; 0 turns the limit off. */
  perSecond: number;
  /** Capacity: the burst a quiet caller may send at once. */
  burst: number;
}

interface Local {
  /** Whole tokens this process leased from the shared bucket and has not spent. */
  tokens: number;
  /** The shared bucket was empty at the last lease: refuse locally until it has refilled a token. */
  deniedUntil: number;
  leasing?: Promise<void>;
  /** Current batch: doubles while leases come quickly (a busy caller), halves back when they do not. */
  batch: number;
  lastLease: number;
}

/** Leases closer than this grow the batch, further apart shrink it. */
const FAST_LEASE_MS = 250;
const SLOW_LEASE_MS = 2000;

/** Buckets this process keeps; an evicted one forgets its leased tokens (the limit only gets stricter). */
const MAX_LOCAL = 10_000;

/**
 * Token buckets shared by every process on the database, without a database round trip per request: each process
 * leases tokens from the shared row in batches (`lease`, default 10, doubling while a busy caller spends them within
 * 250 ms, up to 64 times that or a quarter second of the bucket's rate, whichever is more) and spends them from
 * memory; it leases again ahead of time, once half the batch is spent. Each lease is a write transaction: with a
 * high limit and 640 tokens at most, a caller sending 45,000 calls/s cost ~140 of them a second (1.3% of the
 * accept's CPU); with the quarter second, a few a second. A refused lease records when the shared bucket will have a
 * token again, and every call until then is refused from memory too: a flood over the limit costs no queries.
 *
 * Leased tokens were taken from the shared bucket, so all processes together never exceed the limit; a process that
 * holds unspent tokens only makes them unavailable to the others (at most one batch per bucket and process: never
 * more than the burst, nor than a quarter second of the rate once past 64 leases' worth).
 */
export class RateLimiter {
  private readonly local = new Map<string, Local>();

  constructor(
    private readonly repo: RateBucketsRepository,
    private readonly clock: Clock,
    private readonly leaseSize: number,
    private readonly log: Logger,
  ) {}

  /**
   * Spends one token of the bucket, or rejects with 429 and the seconds until one is available (Retry-After).
   * Answered synchronously (undefined) when memory alone allows the call (the limit is off, or a leased token is at
   * hand): every request passes here, and most need no promise.
   */
  take(organizationId: string, bucket: string, spec: BucketSpec): void | Promise<void> {
    if (spec.perSecond <= 0) return;
    const key = `${organizationId}\u0000${bucket}`;
    let s = this.local.get(key);
    if (!s) {
      s = { tokens: 0, deniedUntil: 0, batch: this.leaseSize, lastLease: 0 };
      setBounded(this.local, key, s, MAX_LOCAL);
    }
    if (this.spend(organizationId, bucket, s, spec)) return;
    return this.takeLeasing(organizationId, bucket, s, spec);
  }

  /** A token from memory when there is one; leases the next batch before this one runs out. */
  private spend(organizationId: string, bucket: string, s: Local, spec: BucketSpec): boolean {
    if (s.tokens < 1) return false;
    s.tokens -= 1;
    const batch = Math.max(1, Math.min(s.batch, spec.burst));
    // Lease the next batch before this one runs out, so a steady caller never waits for the database.
    if (batch > 1 && s.tokens < batch / 2 && !s.leasing) void this.refill(organizationId, bucket, s, spec, batch);
    return true;
  }

  private async takeLeasing(organizationId: string, bucket: string, s: Local, spec: BucketSpec): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      if (now < s.deniedUntil) throw rateLimited(s.deniedUntil - now);
      await this.refill(organizationId, bucket, s, spec, Math.max(1, Math.min(s.batch, spec.burst)));
      if (this.spend(organizationId, bucket, s, spec)) return;
    }
  }

  /** One lease at a time per bucket: concurrent callers wait for the same one. */
  private refill(organizationId: string, bucket: string, s: Local, spec: BucketSpec, batch: number): Promise<void> {
    s.leasing ??= (async () => {
      try {
        const now = this.clock.now();
        const since = now - s.lastLease;
        if (since < FAST_LEASE_MS) s.batch = Math.min(s.batch * 2, Math.max(this.leaseSize * 64, Math.floor(spec.perSecond / 4)));
        else if (since > SLOW_LEASE_MS) s.batch = Math.max(this.leaseSize, Math.floor(s.batch / 2));
        s.lastLease = now;
        const { granted, left } = await this.repo.lease(organizationId, bucket, { want: batch, perSecond: spec.perSecond, burst: spec.burst, now });
        s.tokens += granted;
        // Empty: the next token arrives when the bucket has refilled to one.
        if (granted === 0) s.deniedUntil = now + Math.max(1, Math.ceil(((1 - left) * 1000) / spec.perSecond));
      } catch (e) {
        this.log.warn({ err: e, bucket }, 'rate limit lease failed; the call goes through');
        // The limit protects the service; a database hiccup must not refuse every caller. One token, this time.
        s.tokens += 1;
      } finally {
        s.leasing = undefined;
      }
    })();
    return s.leasing;
  }
}

function rateLimited(ms: number): AppError {
  return new AppError('rate_limited', 'Rate limit exceeded; retry later', { retryAfter: Math.max(1, Math.ceil(ms / 1000)) });
}

export interface RateLimitSettings {
  key: BucketSpec;
  webhook: BucketSpec;
}

/** The two limits of docs/access.md: per principal (API key or JWT subject) and per public webhook URL. */
export class RateLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly settings: RateLimitSettings,
  ) {}

  /** REST calls and key-form webhook calls, per API key (or JWT subject). */
  forPrincipal(p: { organizationId: string; kind: string; subject: string }): void | Promise<void> {
    return this.limiter.take(p.organizationId, `key:${p.kind}:${p.subject}`, this.settings.key);
  }

  /**
   * Public-URL webhook calls, per URL. An agent has one live URL at a time, so the bucket is the agent's: a regenerated
   * URL (after a leak) does not start with a fresh allowance.
   */
  forPublicWebhook(b: { organizationId: string; agentId: string }): void | Promise<void> {
    return this.limiter.take(b.organizationId, `webhook:${b.agentId}`, this.settings.webhook);
  }
}
