import { createHash } from 'node:crypto';
import { readPath } from '../lib/dot-path.js';

/**
 * Duplicate events (`task_level_strategies.duplication_prevention`, docs/contract.md#duplicate-events): webhook
 * senders deliver at least once (Stripe, Cal.com, Stigg retry and sometimes fire twice), and an agent that acts on an
 * event should act once. An invocation whose selected values equal those of one accepted within the window starts
 * nothing: its caller is answered the task the first one started. Pure: the key's storage is task-dedup.repository.ts.
 */

/** xpander's default window. */
export const DEFAULT_DEDUP_TTL_MINUTES = 10;

export interface DedupRule {
  ttlMs: number;
  selectors: readonly string[];
}

/** What a selector reads: the invocation as its caller sent it. */
export interface DedupSource {
  /** The JSON body (an API invocation's, a webhook call's) or a webhook call's form fields. */
  body?: Record<string, unknown>;
  /** A webhook call's query string, read when the body does not have the path. */
  query?: Record<string, unknown>;
}

/** The rule of a stored `duplication_prevention` value; undefined unless it is enabled with selectors. */
export function dedupRule(value: unknown): DedupRule | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const v = value as { enabled?: unknown; ttl_minutes?: unknown; selectors?: unknown };
  if (v.enabled !== true || !Array.isArray(v.selectors)) return undefined;
  const selectors = v.selectors.filter((s): s is string => typeof s === 'string' && s !== '');
  if (selectors.length === 0) return undefined;
  const minutes = typeof v.ttl_minutes === 'number' && Number.isInteger(v.ttl_minutes) && v.ttl_minutes > 0 ? v.ttl_minutes : DEFAULT_DEDUP_TTL_MINUTES;
  return { ttlMs: minutes * 60_000, selectors };
}

/**
 * The event's key: a hash of the selected values, compared as JSON. Undefined when any selector finds nothing (or
 * null, or ''): such a call is not an event the rule can recognise, so it runs as any other (rather than every call
 * without the field being taken for one event).
 */
export function dedupKey(rule: DedupRule, source: DedupSource): string | undefined {
  const values: unknown[] = [];
  for (const selector of rule.selectors) {
    let value = source.body ? readPath(source.body, selector) : undefined;
    if (value === undefined && source.query) {
      value = readPath(source.query, selector);
      // A repeated query parameter counts once (its first value), as webhook parameters do.
      if (Array.isArray(value)) value = value[0];
    }
    if (value === undefined || value === null || value === '') return undefined;
    values.push(value);
  }
  return createHash('sha256').update(JSON.stringify(values)).digest('base64url');
}
