import type { Clock } from '../../lib/clock.js';
import type { SafeFetch } from '../../net/index.js';
import type { DeliveryRow } from '../notifications.repository.js';
import { signatureHeaders } from '../notification-payload.js';
import type { SigningKeys } from '../signing-keys.js';
import { httpOutcome, type ChannelSender, type SendOutcome } from './channel.js';

/**
 * `webhook` targets and a call's `callback_url`: the payload POSTed as JSON, signed the Standard Webhooks way with
 * the agent's secret. `webhook-id` is the delivery's id, the same on every attempt, so a receiver can drop repeats
 * (delivery is at least once); the timestamp and signature are those of the attempt.
 */
export class WebhookChannel implements ChannelSender {
  constructor(
    private readonly fetch: SafeFetch,
    private readonly keys: SigningKeys,
    private readonly clock: Clock,
  ) {}

  async send(d: DeliveryRow, target: unknown, signal: AbortSignal): Promise<SendOutcome> {
    const { url } = target as { url: string };
    const secret = await this.keys.secretFor(d.organization_id, d.agent_id);
    const now = this.clock.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Agentry-Notifications/1',
      ...signatureHeaders(secret, d.id, Math.floor(now / 1000), d.payload),
    };
    // No redirects: a signed body is meant for the URL that was configured, not wherever it points.
    const res = await this.fetch(url, { method: 'POST', headers, body: d.payload, signal, redirect: 'manual' });
    return httpOutcome(res, now);
  }
}
