import { z } from 'zod';
import { REDACTED } from '../lib/secret-box.js';

/**
 * `notification_settings` of an agent (spec 2.1 names the field, not its shape; docs/notifications.md is the
 * reference). Every key is known: an unknown channel or field is a 422, never stored and ignored.
 *
 * {
 *   "on_success": { "webhook": [{"url": "https://..."}], "slack": [{"webhook_url": "https://hooks.slack.com/..."}], "email": ["ops@example.com"] },
 *   "on_error":   { ...the same three channels... },
 *   "smtp": { "host": "smtp.example.com", "port": 587, "secure": false, "username": "bot", "password_secret": "SMTP_PASSWORD", "from": "bot@example.com" }
 * }
 */

/** Targets per channel and event; recipients per email channel. Bounds the work one task end can cause. */
export const MAX_TARGETS = 5;
export const MAX_RECIPIENTS = 20;
const MAX_URL = 2048;

export const httpUrl = () =>
  z
    .string()
    .max(MAX_URL)
    .refine((s) => isHttpUrl(s), { message: 'must be an absolute http or https URL' });

export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

const WebhookTarget = z.strictObject({ url: httpUrl() });
/** The Slack URL is a credential: sealed at rest, shown as "********" (agent-secrets.ts seals `webhook_url`). */
const SlackTarget = z.strictObject({ webhook_url: z.union([z.literal(REDACTED), httpUrl()]) });
const ADDRESS = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/;
const Address = z
  .string()
  .max(320)
  .refine((s) => ADDRESS.test(s), { message: 'must be an email address' });

const Channels = z.strictObject({
  webhook: z.array(WebhookTarget).max(MAX_TARGETS).optional(),
  slack: z.array(SlackTarget).max(MAX_TARGETS).optional(),
  email: z.array(Address).max(MAX_RECIPIENTS).optional(),
});
export type NotificationChannels = z.output<typeof Channels>;

const SecretName = z.string().min(1).max(128);

const Smtp = z
  .strictObject({
    host: z.string().min(1).max(255),
    port: z.number().int().min(1).max(65535).default(587),
    /** true: TLS from the first byte (port 465); false: STARTTLS when the server offers it. */
    secure: z.boolean().default(false),
    /** Refuse to send unless the connection is encrypted (STARTTLS required when `secure` is false). */
    require_tls: z.boolean().default(false),
    username: z.string().min(1).max(255).optional(),
    /** The name of an organization secret (POST /v1/secrets) holding the SMTP password. */
    password_secret: SecretName.optional(),
    from: Address,
  })
  .superRefine((s, ctx) => {
    if (s.username !== undefined && s.password_secret === undefined) {
      ctx.addIssue({ code: 'custom', path: ['password_secret'], message: 'password_secret is required with username: the name of the organization secret holding the SMTP password' });
    }
    if (s.password_secret !== undefined && s.username === undefined) {
      ctx.addIssue({ code: 'custom', path: ['username'], message: 'username is required with password_secret' });
    }
  });
export type SmtpSettings = z.output<typeof Smtp>;

export const NotificationSettings = z
  .strictObject({
    on_success: Channels.optional(),
    on_error: Channels.optional(),
    smtp: Smtp.optional(),
  })
  .superRefine((s, ctx) => {
    const wantsEmail = !!(s.on_success?.email?.length || s.on_error?.email?.length);
    if (wantsEmail && !s.smtp) {
      ctx.addIssue({ code: 'custom', path: ['smtp'], message: 'email notifications need an SMTP server: set notification_settings.smtp' });
    }
  });
export type NotificationSettingsValue = z.output<typeof NotificationSettings>;

/** Which settings an ended task uses: `completed` is a success; `failed`, `error` and `stopped` are not. */
export function eventOf(status: string): { event: string; key: 'on_success' | 'on_error' } | undefined {
  if (status === 'completed') return { event: 'task.completed', key: 'on_success' };
  if (status === 'failed' || status === 'error' || status === 'stopped') return { event: `task.${status}`, key: 'on_error' };
  return undefined;
}

/**
 * The stored settings as the worker reads them. Settings saved before this shape existed (any JSON object was
 * accepted) are not acted on; undefined then, as for none.
 */
export function readSettings(raw: unknown): NotificationSettingsValue | undefined {
  if (!raw || typeof raw !== 'object' || Object.keys(raw).length === 0) return undefined;
  const parsed = NotificationSettings.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
