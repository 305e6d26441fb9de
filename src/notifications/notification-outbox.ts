import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { PublicUrls } from '../lib/urls.js';
import type { NewDeliveryRow, TaskEnd, TaskEndNotifier } from '../tasks/task-end-notifier.js';
import { buildPayload } from './notification-payload.js';
import { eventOf, readSettings, type SmtpSettings } from './notification-settings.js';

/** Where one delivery goes, as stored in `notification_deliveries.target` (JSON). */
export type DeliveryTarget =
  | { url: string }
  /** Slack's URL is a credential: sealed with the secret box inside the row too. */
  | { sealed_url: string }
  | { to: string[]; smtp: SmtpSettings };

export const CHANNELS = ['webhook', 'slack', 'email', 'callback'] as const;
export type Channel = (typeof CHANNELS)[number];

/**
 * Plans the outbox rows of a task end from the agent's settings and the call's callback_url. Runs in the worker
 * right before the final status is written; the queue commits the rows with it (task-queue.repository.ts).
 */
export class NotificationOutbox implements TaskEndNotifier {
  /** Set by the container: the local dispatcher, woken when rows were committed in this process. */
  onCommitted?: () => void;

  constructor(
    private readonly box: SecretBox,
    private readonly urls: PublicUrls,
    private readonly clock: Clock,
    private readonly giveUpMs: number,
  ) {}

  plan(end: TaskEnd): NewDeliveryRow[] {
    const raw = end.agentConfig?.notification_settings;
    // The common case: no settings, no callback. Nothing is parsed or built.
    if (!end.callbackUrl && (!raw || typeof raw !== 'object' || Object.keys(raw).length === 0)) return [];
    const ev = eventOf(end.status);
    if (!ev) return [];
    const settings = readSettings(raw);
    const channels = settings?.[ev.key];
    const targets: { channel: Channel; target: DeliveryTarget }[] = [];
    for (const w of channels?.webhook ?? []) targets.push({ channel: 'webhook', target: { url: w.url } });
    for (const s of channels?.slack ?? []) targets.push({ channel: 'slack', target: { sealed_url: this.box.seal(s.webhook_url) } });
    if (channels?.email?.length && settings?.smtp) targets.push({ channel: 'email', target: { to: channels.email, smtp: settings.smtp } });
    if (end.callbackUrl) targets.push({ channel: 'callback', target: { url: end.callbackUrl } });
    if (!targets.length) return [];
    const view = end.view();
    const name = end.agentConfig?.name;
    const payload = buildPayload(ev.event, view, typeof name === 'string' ? name : null, this.taskUrl(view.id));
    const now = this.clock.now();
    return targets.map(({ channel, target }) => ({
      organization_id: view.organization_id,
      id: newId(),
      task_id: view.id,
      agent_id: view.agent_id,
      event: ev.event,
      channel,
      target: JSON.stringify(target),
      payload,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      give_up_at: now + this.giveUpMs,
      lease_owner: null,
      lease_expires_at: null,
      last_error: null,
      created_at: now,
      updated_at: now,
      delivered_at: null,
    }));
  }

  committed(): void {
    this.onCommitted?.();
  }

  /** The task's page in the console. */
  taskUrl(taskId: string): string {
    return `${this.urls.api}/#/tasks/${encodeURIComponent(taskId)}`;
  }
}
