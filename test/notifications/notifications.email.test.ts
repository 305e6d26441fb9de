import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, ScriptedRunner, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * Email notifications through a real SMTP server started in the test (smtp-server), which checks the credentials
 * (the password comes from the organization's secrets) and hands each message to mailparser.
 */
describe.each(TEST_DBS)('task-end email notifications (%s)', (kind) => {
  let t: TasksApp;
  let runner: ScriptedRunner;
  let smtp: SMTPServer;
  let port: number;
  const mails: { envelope: { from: string; to: string[] }; mail: ParsedMail }[] = [];
  const logins: string[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      // Plain SMTP on loopback: no STARTTLS offered, authentication allowed without it (the test's own sink).
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _session, cb) {
        logins.push(`${auth.username}:${auth.password}`);
        if (auth.username === 'bot' && auth.password === 'smtp-pass-1') return cb(null, { user: 'bot' });
        return cb(new Error('Invalid username or password'));
      },
      onData(stream, session, cb) {
        simpleParser(stream)
          .then((mail) => {
            mails.push({ envelope: { from: String((session.envelope.mailFrom as { address: string }).address), to: session.envelope.rcptTo.map((r) => r.address) }, mail });
            cb();
          })
          .catch(cb);
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    port = (smtp.server.address() as AddressInfo).port;
    runner = new ScriptedRunner();
    t = await createTasksApp(kind, { runner, env: { AGENTRY_NOTIFY_RETRY_BASE_MS: '40', AGENTRY_NOTIFY_RETRY_MAX_MS: '200', AGENTRY_NOTIFY_POLL_MS: '50' } });
    await t.c.notificationDispatcher.start();
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  });

  const smtpSettings = (secret: string) => ({ host: '127.0.0.1', port, secure: false, username: 'bot', password_secret: secret, from: 'agentry@example.com' });
  const waitDelivery = async (taskId: string) => {
    const end = Date.now() + 20_000;
    for (;;) {
      const d = (await t.req('GET', `/v1/tasks/${taskId}/notifications`)).json()[0];
      if (d && d.status !== 'pending') return d;
      if (Date.now() > end) throw new Error(`delivery stayed ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 30));
    }
  };

  it('mails the recipients of on_error in plain text and HTML, logging in with the password from the secrets', async () => {
    expect((await t.req('PUT', '/v1/secrets/SMTP_PASSWORD', { value: 'smtp-pass-1' })).statusCode).toBeLessThan(300);
    const agentId = await t.createAgent({
      name: `Mailer ${kind}`,
      notification_settings: { on_error: { email: ['ops@example.com', 'lead@example.com'] }, smtp: smtpSettings('SMTP_PASSWORD') },
    });
    runner.handler = async () => ({ status: 'failed', result: 'The <invoice> could not be read' });
    const id = (await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'read it' } })).json().id;
    const d = await waitDelivery(id);
    expect(d).toMatchObject({ channel: 'email', status: 'delivered', target: 'ops@example.com, lead@example.com' });
    const got = mails.find((m) => m.mail.headers.get('x-agentry-delivery') === d.id)!;
    expect(got.envelope).toEqual({ from: 'agentry@example.com', to: ['ops@example.com', 'lead@example.com'] });
    expect(got.mail.subject).toBe(`[Agentry] Mailer ${kind}: task failed`);
    expect(got.mail.text).toContain('The <invoice> could not be read');
    expect(got.mail.text).toContain(`#/tasks/${id}`);
    expect(got.mail.html).toContain('The &lt;invoice&gt; could not be read');
    expect(got.mail.html).toContain(`<a href="http://`);
    expect(logins).toContain('bot:smtp-pass-1');
  });

  it('records a missing secret or refused login as a failed delivery with a clear error', async () => {
    const agentId = await t.createAgent({ notification_settings: { on_success: { email: ['ops@example.com'] }, smtp: smtpSettings('NO_SUCH_SECRET') } });
    runner.handler = async () => ({ result: 'done' });
    const id = (await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'x' } })).json().id;
    const d = await waitDelivery(id);
    expect(d).toMatchObject({ status: 'failed', attempts: 1 });
    expect(d.last_error).toMatch(/no secret named "NO_SUCH_SECRET"/);

    await t.req('PUT', '/v1/secrets/WRONG_PASSWORD', { value: 'nope' });
    const agent2 = await t.createAgent({ notification_settings: { on_success: { email: ['ops@example.com'] }, smtp: smtpSettings('WRONG_PASSWORD') } });
    const id2 = (await t.req('POST', `/v1/agents/${agent2}/invoke/async`, { input: { text: 'y' } })).json().id;
    const d2 = await waitDelivery(id2);
    expect(d2).toMatchObject({ status: 'failed', attempts: 1 });
    expect(d2.last_error).toMatch(/^SMTP: .*Invalid username or password/);
  });
});
