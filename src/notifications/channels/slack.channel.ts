import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { SafeFetch } from '../../net/index.js';
import type { DeliveryRow } from '../notifications.repository.js';
import { truncate } from '../notification-payload.js';
import { httpOutcome, type ChannelSender, type SendOutcome } from './channel.js';
import { describe, type PayloadData } from './message.js';

/** Characters of the result a Slack message shows (Slack cuts a section's text at 3000). */
const SLACK_RESULT_CHARS = 1500;

/** A Slack incoming webhook: a short readable message (agent, status, trimmed result, link to the console). */
export class SlackChannel implements ChannelSender {
  constructor(
    private readonly fetch: SafeFetch,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  async send(d: DeliveryRow, target: unknown, signal: AbortSignal): Promise<SendOutcome> {
    const url = this.box.open((target as { sealed_url: string }).sealed_url);
    const data = (JSON.parse(d.payload) as { data: PayloadData }).data;
    const m = describe(data);
    const text = `${m.icon} ${m.headline}`;
    const body = JSON.stringify({
      text,
      blocks: [
        { type: 'section', text: { type: 'mrkdwn', text: `${m.icon} *${escape(m.agent)}*: task ${escape(m.statusWord)}` } },
        ...(m.outcome ? [{ type: 'section', text: { type: 'mrkdwn', text: '```' + escape(truncate(m.outcome, SLACK_RESULT_CHARS)) + '```' } }] : []),
        { type: 'context', elements: [{ type: 'mrkdwn', text: `<${data.console_url}|Task ${escape(data.task_id)}> · ${m.timing}` }] },
      ],
    });
    const now = this.clock.now();
    const res = await this.fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal, redirect: 'manual' });
    return httpOutcome(res, now);
  }
}

/** Slack's mrkdwn escapes (https://api.slack.com/reference/surfaces/formatting#escaping). */
function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
