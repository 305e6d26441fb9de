import { isoOrNull, isoTime } from '../lib/clock.js';
import { REDACTED } from '../lib/secret-box.js';
import type { AttemptRow, DeliveryRow } from './notifications.repository.js';

/** A delivery as GET /v1/tasks/{id}/notifications shows it (docs/notifications.md). */
export interface DeliveryView {
  id: string;
  task_id: string;
  agent_id: string;
  event: string;
  channel: string;
  /** Where it goes: the URL, the recipients; a Slack URL is a credential and shows as "********". */
  target: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  give_up_at: string;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  attempt_log: AttemptView[];
}

export interface AttemptView {
  attempt: number;
  started_at: string;
  latency_ms: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
}

export function presentDelivery(d: DeliveryRow, attempts: AttemptRow[]): DeliveryView {
  return {
    id: d.id,
    task_id: d.task_id,
    agent_id: d.agent_id,
    event: d.event,
    channel: d.channel,
    target: describeTarget(d.target),
    status: d.status,
    attempts: Number(d.attempts),
    next_attempt_at: d.status === 'pending' ? isoTime(Number(d.next_attempt_at)) : null,
    give_up_at: isoTime(Number(d.give_up_at)),
    last_error: d.last_error,
    created_at: isoTime(Number(d.created_at)),
    delivered_at: isoOrNull(d.delivered_at),
    attempt_log: attempts.map((a) => ({
      attempt: Number(a.attempt),
      started_at: isoTime(Number(a.started_at)),
      latency_ms: Number(a.latency_ms),
      outcome: a.outcome,
      status_code: a.status_code === null ? null : Number(a.status_code),
      error: a.error,
    })),
  };
}

function describeTarget(json: string): string {
  const t = JSON.parse(json) as { url?: string; sealed_url?: string; to?: string[] };
  if (t.url) return t.url;
  if (t.sealed_url) return REDACTED;
  return (t.to ?? []).join(', ');
}
