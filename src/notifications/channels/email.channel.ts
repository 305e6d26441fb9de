import { resolveAllowedHost, type EgressPolicy } from '../../net/index.js';
import type { DeliveryRow } from '../notifications.repository.js';
import type { SmtpSettings } from '../notification-settings.js';
import { truncate } from '../notification-payload.js';
import type { ChannelSender, SendOutcome } from './channel.js';
import { describe, type PayloadData } from './message.js';

/** Characters of the result an email shows; the link leads to the whole task. */
const EMAIL_RESULT_CHARS = 20_000;

/** The organization's secrets by name (src/secrets): the SMTP password is one. */
export type SecretLookup = (organizationId: string, name: string) => Promise<string | undefined>;

/**
 * Email through SMTP with nodemailer: plain text and HTML. The server is the agent's `smtp` setting; its password
 * an organization secret read at send time. The host passes the egress policy: its address is resolved and checked
 * here and nodemailer connects to that address (TLS still verifies the host name).
 */
export class EmailChannel implements ChannelSender {
  constructor(
    private readonly policy: EgressPolicy,
    private readonly secrets: SecretLookup,
    private readonly timeoutMs: number,
  ) {}

  async send(d: DeliveryRow, target: unknown, signal: AbortSignal): Promise<SendOutcome> {
    const { to, smtp } = target as { to: string[]; smtp: SmtpSettings };
    let password: string | undefined;
    if (smtp.password_secret) {
      password = await this.secrets(d.organization_id, smtp.password_secret);
      if (password === undefined) return { ok: false, retry: false, error: `The organization has no secret named "${smtp.password_secret}" (notification_settings.smtp.password_secret)` };
    }
    const address = await resolveAllowedHost(this.policy, smtp.host, `smtp://${smtp.host}:${smtp.port}`);
    // Loaded on the first email: most processes never send one, and the module costs ~0.3 s to load.
    const { createTransport } = await import('nodemailer');
    const transport = createTransport({
      host: address,
      port: smtp.port,
      secure: smtp.secure,
      requireTLS: smtp.require_tls,
      auth: smtp.username ? { user: smtp.username, pass: password } : undefined,
      tls: { servername: smtp.host },
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
    });
    const onAbort = () => transport.close();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const data = (JSON.parse(d.payload) as { data: PayloadData }).data;
      const m = describe(data);
      const outcome = m.outcome === null ? '' : truncate(m.outcome, EMAIL_RESULT_CHARS);
      await transport.sendMail({
        from: smtp.from,
        to,
        subject: `[Agentry] ${m.headline}`,
        text: `${m.headline}\n\n${outcome}\n\n${m.timing}\nTask ${data.task_id}: ${data.console_url}\n`,
        html: `<p><strong>${html(m.agent)}</strong>: task ${html(m.statusWord)}</p>${outcome ? `<pre>${html(outcome)}</pre>` : ''}<p>${html(m.timing)}<br><a href="${html(data.console_url)}">Task ${html(data.task_id)}</a></p>`,
        headers: { 'X-Agentry-Delivery': d.id },
      });
      return { ok: true };
    } catch (e) {
      if (signal.aborted) throw signal.reason ?? e;
      const err = e as Error & { responseCode?: number; code?: string };
      // 5xx SMTP replies are permanent (bad recipient, refused sender, failed authentication); others may pass later.
      const permanent = typeof err.responseCode === 'number' && err.responseCode >= 500;
      return { ok: false, retry: !permanent, statusCode: err.responseCode, error: `SMTP: ${err.message}` };
    } finally {
      signal.removeEventListener('abort', onAbort);
      transport.close();
    }
  }
}

function html(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
