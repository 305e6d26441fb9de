import { createHmac, randomBytes } from 'node:crypto';
import { isoOrNull, isoTime } from '../lib/clock.js';

/**
 * The notification body every channel is built from, and Standard Webhooks signing
 * (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature`
 * (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` keyed with the secret's base64 part after `whsec_`).
 */

/** The ended task as a notification shows it: what a receiver needs without calling back (docs/notifications.md). */
export interface TaskEndView {
  id: string;
  agent_id: string;
  organization_id: string;
  status: string;
  result: string | null;
  source: string;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  execution_attempts: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  llm_model_provider: string | null;
  llm_model_name: string | null;
}

/** Characters of the result a payload carries; the whole result stays readable at GET /v1/tasks/{id}. */
export const MAX_RESULT_CHARS = 64 * 1024;

export function buildPayload(event: string, t: TaskEndView, agentName: string | null, consoleUrl: string): string {
  const ok = t.status === 'completed';
  const result = t.result === null ? null : truncate(t.result, MAX_RESULT_CHARS);
  return JSON.stringify({
    type: event,
    timestamp: isoTime(Number(t.finished_at ?? Date.now())),
    data: {
      task_id: t.id,
      agent_id: t.agent_id,
      agent_name: agentName,
      organization_id: t.organization_id,
      status: t.status,
      result: ok ? result : null,
      error: ok ? null : (result ?? 'The task ended without a result'),
      result_truncated: t.result !== null && t.result.length > MAX_RESULT_CHARS,
      source: t.source,
      created_at: isoOrNull(t.created_at),
      started_at: isoOrNull(t.started_at),
      finished_at: isoOrNull(t.finished_at),
      duration_ms: t.started_at !== null && t.finished_at !== null ? Number(t.finished_at) - Number(t.started_at) : null,
      execution_attempts: Number(t.execution_attempts),
      tokens: { prompt_tokens: Number(t.prompt_tokens), completion_tokens: Number(t.completion_tokens), total_tokens: Number(t.total_tokens) },
      llm_model_provider: t.llm_model_provider,
      llm_model_name: t.llm_model_name,
      console_url: consoleUrl,
    },
  });
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A new signing secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The three Standard Webhooks headers for `body`, sent as `msgId` at `timestampSec`. */
export function signatureHeaders(secret: string, msgId: string, timestampSec: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${msgId}.${timestampSec}.${body}`).digest('base64');
  return { 'webhook-id': msgId, 'webhook-timestamp': String(timestampSec), 'webhook-signature': `v1,${signature}` };
}
