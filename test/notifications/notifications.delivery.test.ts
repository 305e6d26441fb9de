import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTasksApp, ScriptedRunner, type TasksApp } from '../tasks/tasks-harness.js';
import { TEST_DBS } from '../support/harness.js';
import { NotificationReceiver, startReceiver } from '../fakes/notification-receiver.js';

/**
 * Task-end notifications end to end (docs/notifications.md): real receivers on 127.0.0.1, the real worker and
 * dispatcher, a scripted runner for the task outcomes. Signatures are checked with the `standardwebhooks` library,
 * as a receiver would.
 */
const FAST_RETRIES = { AGENTRY_NOTIFY_RETRY_BASE_MS: '40', AGENTRY_NOTIFY_RETRY_MAX_MS: '200', AGENTRY_NOTIFY_POLL_MS: '50' };

interface Delivery {
  id: string;
  channel: string;
  event: string;
  status: string;
  attempts: number;
  target: string;
  last_error: string | null;
  attempt_log: { attempt: number; outcome: string; status_code: number | null; error: string | null; started_at: string }[];
}

describe.each(TEST_DBS)('task-end notifications (%s)', (kind) => {
  let t: TasksApp;
  let runner: ScriptedRunner;
  let rx: NotificationReceiver;

  beforeAll(async () => {
    runner = new ScriptedRunner();
    t = await createTasksApp(kind, { runner, env: { ...FAST_RETRIES, AGENTRY_NOTIFY_TIMEOUT_MS: '5000', AGENTRY_WORKER_CONCURRENCY: '1' } });
    await t.c.notificationDispatcher.start();
  });
  afterAll(async () => {
    await rx?.close();
    await t?.close();
  });
  afterEach(async () => {
    await rx?.close();
    runner.handler = async (req) => ({ result: `echo: ${req.task.input.text}` });
  });

  const deliveries = async (taskId: string): Promise<Delivery[]> => {
    const r = await t.req('GET', `/v1/tasks/${taskId}/notifications`);
    expect(r.statusCode).toBe(200);
    return r.json();
  };
  const waitDeliveries = async (taskId: string, done: (d: Delivery[]) => boolean, timeoutMs = 20_000): Promise<Delivery[]> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const d = await deliveries(taskId);
      if (done(d)) return d;
      if (Date.now() > end) throw new Error(`deliveries stayed ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 30));
    }
  };
  const invoke = async (agentId: string, text: string) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { input: { text } });
    expect(r.statusCode).toBe(200);
    return r.json().id as string;
  };
  const rotate = async (agentId: string) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/notifications/signing-secret`);
    expect(r.statusCode).toBe(200);
    return r.json().secret as string;
  };

  it('POSTs a Standard Webhooks signed payload on success and on error, each to its own URL', async () => {
    rx = await startReceiver();
    const agentId = await t.createAgent({
      notification_settings: { on_success: { webhook: [{ url: `${rx.url}/ok` }] }, on_error: { webhook: [{ url: `${rx.url}/err` }] } },
    });
    const secret = await rotate(agentId);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
    // Shown once: reading it back gives the mask.
    expect((await t.req('GET', `/v1/agents/${agentId}/notifications/signing-secret`)).json()).toMatchObject({ secret: '********' });

    runner.handler = async (req) => (req.task.input.text === 'bad' ? { status: 'error', result: 'the tool broke' } : { result: 'all good' });
    const ok = await invoke(agentId, 'fine');
    const bad = await invoke(agentId, 'bad');
    await rx.waitFor(2);
    const wh = new Webhook(secret);
    const byPath = Object.fromEntries(rx.requests.map((r) => [r.path, r]));
    for (const r of rx.requests) {
      expect(r.headers['content-type']).toBe('application/json');
      // Throws unless the signature and timestamp verify.
      wh.verify(r.body, r.headers as Record<string, string>);
    }
    const success = JSON.parse(byPath['/ok']!.body);
    expect(success).toMatchObject({
      type: 'task.completed',
      data: { task_id: ok, agent_id: agentId, status: 'completed', result: 'all good', error: null, tokens: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
    });
    expect(success.data.console_url).toContain(`#/tasks/${ok}`);
    expect(typeof success.data.duration_ms).toBe('number');
    const failure = JSON.parse(byPath['/err']!.body);
    expect(failure).toMatchObject({ type: 'task.error', data: { task_id: bad, status: 'error', result: null, error: 'the tool broke' } });
    // A signature made with another secret does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(byPath['/ok']!.body, byPath['/ok']!.headers as Record<string, string>)).toThrow();

    const [d] = await waitDeliveries(ok, (x) => x[0]?.status === 'delivered');
    expect(d).toMatchObject({ channel: 'webhook', event: 'task.completed', status: 'delivered', attempts: 1, target: `${rx.url}/ok` });
    expect(d!.attempt_log).toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered', status_code: 200, error: null })]);
    expect(byPath['/ok']!.headers['webhook-id']).toBe(d!.id);
  });

  it('a stopped task notifies the on_error channels (task.stopped)', async () => {
    rx = await startReceiver();
    runner.handler = (req) => new Promise((resolve) => req.signal.addEventListener('abort', () => resolve({ result: 'aborted' }), { once: true }));
    const agentId = await t.createAgent({ notification_settings: { on_error: { webhook: [{ url: `${rx.url}/stopped` }] } } });
    const id = await invoke(agentId, 'long job');
    await t.waitTask(id, (x) => x.status === 'executing');
    expect((await t.req('POST', `/v1/tasks/${id}/stop`)).json().status).toBe('stopped');
    const [r] = await rx.waitFor(1);
    expect(JSON.parse(r!.body)).toMatchObject({ type: 'task.stopped', data: { task_id: id, status: 'stopped', result: null } });
    await waitDeliveries(id, (x) => x.length === 1 && x[0]!.status === 'delivered');
  });

  it('sends nothing and writes no outbox row for an agent without settings', async () => {
    const agentId = await t.createAgent();
    const id = await invoke(agentId, 'quiet');
    await t.waitTask(id, (x) => x.status === 'completed');
    expect(await deliveries(id)).toEqual([]);
    const rows = await t.c.db.kysely.selectFrom('notification_deliveries').select('id').where('task_id', '=', id).execute();
    expect(rows).toEqual([]);
  });

  it('posts a readable Slack message with the agent, the status, the trimmed result and a link to the task', async () => {
    rx = await startReceiver();
    const hook = `${rx.url}/services/T000/B000/XXXX`;
    const agentId = await t.createAgent({ name: `Invoice bot ${kind}`, notification_settings: { on_success: { slack: [{ webhook_url: hook }] } } });
    // The Slack URL is a credential: never shown again.
    const agent = (await t.req('GET', `/v1/agents/${agentId}`)).json();
    expect(agent.notification_settings.on_success.slack).toEqual([{ webhook_url: '********' }]);
    runner.handler = async () => ({ result: 'x'.repeat(5000) });
    const id = await invoke(agentId, 'long answer');
    const [r] = await rx.waitFor(1);
    expect(r!.path).toBe('/services/T000/B000/XXXX');
    const msg = JSON.parse(r!.body);
    expect(msg.text).toContain(`Invoice bot ${kind}: task completed`);
    const all = JSON.stringify(msg.blocks);
    expect(all).toContain(`#/tasks/${id}`);
    expect(all).toContain('x'.repeat(100));
    expect(all).not.toContain('x'.repeat(2000));
    const [d] = await waitDeliveries(id, (x) => x[0]?.status === 'delivered');
    expect(d!.target).toBe('********');
    // Writing the mask back keeps the stored URL.
    const patched = await t.req('PATCH', `/v1/agents/${agentId}`, { notification_settings: agent.notification_settings });
    expect(patched.statusCode).toBe(200);
    const again = await invoke(agentId, 'second');
    await rx.waitFor(2);
    expect(rx.requests[1]!.path).toBe('/services/T000/B000/XXXX');
    await waitDeliveries(again, (x) => x[0]?.status === 'delivered');
  });

  it('retries a receiver that is down until it is back, with backoff, recording every attempt', async () => {
    rx = await startReceiver();
    const port = rx.port;
    await rx.close();
    const agentId = await t.createAgent({ notification_settings: { on_success: { webhook: [{ url: `http://127.0.0.1:${port}/hook` }] } } });
    const id = await invoke(agentId, 'while down');
    const failing = await waitDeliveries(id, (x) => (x[0]?.attempts ?? 0) >= 2);
    expect(failing[0]).toMatchObject({ status: 'pending' });
    expect(failing[0]!.last_error).toMatch(/fetch failed|ECONNREFUSED/);
    expect(failing[0]!.attempt_log.every((a) => a.outcome === 'retry' && a.status_code === null)).toBe(true);
    rx = await new NotificationReceiver().listen(port);
    const [d] = await waitDeliveries(id, (x) => x[0]?.status === 'delivered');
    expect(d!.attempt_log.at(-1)).toMatchObject({ outcome: 'delivered', status_code: 200 });
    expect(d!.attempts).toBe(d!.attempt_log.length);
    expect(rx.requests.length).toBe(1);
  });

  it('never retries sooner than the backoff, whatever Retry-After says (0, a date in the past)', async () => {
    // A receiver answering 503 with `Retry-After: 0` had the dispatcher retry at once, every time, until the give-up
    // time (24 h by default): a hot loop of requests and recorded attempts that the receiver's owner controls.
    rx = await startReceiver();
    rx.handle = (r) => ({ status: 503, headers: { 'retry-after': r.path === '/zero' ? '0' : 'Thu, 01 Jan 1970 00:00:00 GMT' } });
    const agentId = await t.createAgent({ notification_settings: { on_success: { webhook: [{ url: `${rx.url}/zero` }, { url: `${rx.url}/past` }] } } });
    const id = await invoke(agentId, 'hammer');
    await waitDeliveries(id, (x) => x.length === 2 && x.every((d) => d.attempts >= 1));
    await new Promise((r) => setTimeout(r, 1500));
    // The backoff here is 40 ms doubling to 200 ms with 50-100 % jitter: about 10 attempts in 1.5 s, never hundreds.
    for (const path of ['/zero', '/past']) expect(rx.requests.filter((r) => r.path === path).length, path).toBeLessThan(40);
    const ds = await deliveries(id);
    for (const d of ds) {
      const starts = d.attempt_log.map((a) => Date.parse(a.started_at));
      for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(15);
    }
    await t.req('DELETE', `/v1/tasks/${id}`);
  });

  it("honours a 429's Retry-After, and gives up at once on a 4xx that retrying cannot fix; a failed delivery can be re-sent", async () => {
    rx = await startReceiver();
    let limitedCalls = 0;
    rx.handle = (r) => (r.path === '/gone' ? { status: 410, body: 'no such hook' } : ++limitedCalls === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 204 });
    const agentId = await t.createAgent({ notification_settings: { on_success: { webhook: [{ url: `${rx.url}/limited` }, { url: `${rx.url}/gone` }] } } });
    const id = await invoke(agentId, 'twice');
    const ds = await waitDeliveries(id, (x) => x.length === 2 && x.every((d) => d.status !== 'pending'));
    const limited = ds.find((d) => d.target.endsWith('/limited'))!;
    const gone = ds.find((d) => d.target.endsWith('/gone'))!;
    expect(limited).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(limited.attempt_log.map((a) => [a.outcome, a.status_code])).toEqual([['retry', 429], ['delivered', 204]]);
    // The second attempt waited for the Retry-After (1 s), not for the 40 ms backoff.
    const gap = Date.parse(limited.attempt_log[1]!.started_at) - Date.parse(limited.attempt_log[0]!.started_at);
    expect(gap).toBeGreaterThanOrEqual(1000);
    expect(gone).toMatchObject({ status: 'failed', attempts: 1, last_error: 'HTTP 410: no such hook' });

    rx.handle = () => ({ status: 200 });
    const resent = await t.req('POST', `/v1/tasks/${id}/notifications/${gone.id}/resend`);
    expect(resent.statusCode).toBe(200);
    expect(resent.json()).toMatchObject({ id: gone.id, status: 'pending' });
    const after = await waitDeliveries(id, (x) => x.find((d) => d.id === gone.id)?.status === 'delivered');
    expect(after.find((d) => d.id === gone.id)!.attempt_log.map((a) => a.outcome)).toEqual(['failed', 'delivered']);
    // The re-sent body is the same message: same webhook-id.
    const goneRequests = rx.requests.filter((r) => r.path === '/gone');
    expect(new Set(goneRequests.map((r) => r.headers['webhook-id']))).toEqual(new Set([gone.id]));
    expect(goneRequests[0]!.body).toBe(goneRequests.at(-1)!.body);
  });

  it('a slow receiver holds no task slot: with one worker slot, the next task runs while a delivery hangs', async () => {
    rx = await startReceiver();
    rx.handle = () => ({ hang: true });
    const agentId = await t.createAgent({ notification_settings: { on_success: { webhook: [{ url: `${rx.url}/slow` }] } } });
    const first = await invoke(agentId, 'first');
    await rx.waitFor(1);
    // AGENTRY_WORKER_CONCURRENCY=1: a synchronous run needs the only slot.
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'second' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'echo: second' });
    expect(rx.pending).toBeGreaterThanOrEqual(1);
    expect((await deliveries(first))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    rx.release();
    await waitDeliveries(first, (x) => x[0]?.status === 'delivered');
  });

  it('passes every delivery through the egress policy: a loopback address that is not allowed is refused for good', async () => {
    const agentId = await t.createAgent({
      notification_settings: {
        on_success: { webhook: [{ url: 'http://127.0.0.2:9/hook' }], email: ['ops@example.com'] },
        smtp: { host: '127.0.0.2', port: 25, from: 'a@example.com' },
      },
    });
    const id = await invoke(agentId, 'contained');
    const ds = await waitDeliveries(id, (x) => x.length === 2 && x.every((d) => d.status !== 'pending'));
    for (const d of ds) {
      expect(d).toMatchObject({ status: 'failed', attempts: 1 });
      expect(d.last_error).toMatch(/refused: 127\.0\.0\.2 is a private, loopback or link-local address/);
    }
  });

  it('refuses bad settings with a 422 at the right place and changes nothing', async () => {
    const agentId = await t.createAgent();
    const cases: [unknown, (string | number)[]][] = [
      [{ on_success: { webhook: [{ url: 'ftp://example.com/x' }] } }, ['body', 'notification_settings', 'on_success', 'webhook', 0, 'url']],
      [{ on_success: { webhook: [{ url: 'not a url' }] } }, ['body', 'notification_settings', 'on_success', 'webhook', 0, 'url']],
      [{ on_error: { sms: ['+1555'] } }, ['body', 'notification_settings', 'on_error', 'sms']],
      [{ on_finish: {} }, ['body', 'notification_settings', 'on_finish']],
      [{ on_error: { email: ['ops@example.com'] } }, ['body', 'notification_settings', 'smtp']],
      [{ on_error: { email: ['not-an-address'] }, smtp: { host: 'h', from: 'a@b.co' } }, ['body', 'notification_settings', 'on_error', 'email', 0]],
      [{ smtp: { host: 'smtp.example.com', from: 'a@b.co', username: 'bot' } }, ['body', 'notification_settings', 'smtp', 'password_secret']],
      [{ on_success: { slack: [{ url: 'https://hooks.slack.com/x' }] } }, ['body', 'notification_settings', 'on_success', 'slack', 0, 'url']],
      [{ on_success: { webhook: Array.from({ length: 6 }, () => ({ url: 'https://example.com' })) } }, ['body', 'notification_settings', 'on_success', 'webhook']],
    ];
    for (const [settings, loc] of cases) {
      for (const r of [
        await t.req('PATCH', `/v1/agents/${agentId}`, { notification_settings: settings }),
        await t.req('POST', '/v1/agents', { name: `refused ${Math.random()}`, notification_settings: settings }),
      ]) {
        expect(r.statusCode, JSON.stringify(settings)).toBe(422);
        expect(r.json().detail.map((d: { loc: unknown }) => d.loc), JSON.stringify(settings)).toContainEqual(loc);
        expect(r.body).not.toContain('Value error, Value error');
      }
    }
    expect((await t.req('GET', `/v1/agents/${agentId}`)).json().notification_settings).toEqual({});
    const smtpMissing = await t.req('PATCH', `/v1/agents/${agentId}`, { notification_settings: { on_error: { email: ['ops@example.com'] } } });
    expect(smtpMissing.json().detail).toEqual([
      expect.objectContaining({ loc: ['body', 'notification_settings', 'smtp'], msg: 'Value error, email notifications need an SMTP server: set notification_settings.smtp', type: 'value_error' }),
    ]);
  });

  it("another organization's task, delivery and agent answer exactly like missing ones", async () => {
    rx = await startReceiver();
    const agentId = await t.createAgent({ notification_settings: { on_success: { webhook: [{ url: `${rx.url}/x` }] } } });
    const id = await invoke(agentId, 'mine');
    const [d] = await waitDeliveries(id, (x) => x[0]?.status === 'delivered');
    const other = { 'x-api-key': t.keyB };
    for (const [method, url] of [
      ['GET', `/v1/tasks/${id}/notifications`],
      ['POST', `/v1/tasks/${id}/notifications/${d!.id}/resend`],
    ] as const) {
      const theirs = await t.req(method, url, undefined, other);
      const missing = await t.req(method, url.replace(id, 'no-such-task'), undefined, other);
      expect(theirs.statusCode).toBe(404);
      expect(theirs.json()).toEqual(missing.json());
    }
    for (const method of ['GET', 'POST'] as const) {
      const theirs = await t.req(method, `/v1/agents/${agentId}/notifications/signing-secret`, undefined, other);
      expect(theirs.statusCode).toBe(404);
      expect(theirs.json()).toEqual({ detail: 'Agent not found' });
    }
    expect((await t.req('POST', `/v1/tasks/${id}/notifications/nope/resend`)).json()).toEqual({ detail: 'Notification not found' });
    // Deleting the task deletes its deliveries and attempts.
    expect((await t.req('DELETE', `/v1/tasks/${id}`)).statusCode).toBe(200);
    expect(await t.c.db.kysely.selectFrom('notification_deliveries').select('id').where('task_id', '=', id).execute()).toEqual([]);
    expect(await t.c.db.kysely.selectFrom('notification_attempts').select('attempt').where('delivery_id', '=', d!.id).execute()).toEqual([]);
  });
});

describe.each(TEST_DBS)('task-end notifications: bounded give-up (%s)', (kind) => {
  let t: TasksApp;
  let rx: NotificationReceiver;
  beforeAll(async () => {
    t = await createTasksApp(kind, { runner: new ScriptedRunner(), env: { ...FAST_RETRIES, AGENTRY_NOTIFY_GIVE_UP_MS: '1000' } });
    await t.c.notificationDispatcher.start();
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await t?.close();
  });

  it('gives up once the give-up time has passed, keeping every attempt', async () => {
    rx.handle = () => ({ status: 503 });
    const agentId = await t.createAgent({ notification_settings: { on_success: { webhook: [{ url: `${rx.url}/down` }] } } });
    const id = (await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'x' } })).json().id;
    const end = Date.now() + 20_000;
    let d: Delivery;
    for (;;) {
      d = (await t.req('GET', `/v1/tasks/${id}/notifications`)).json()[0];
      if (d?.status === 'failed' || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(d!.status).toBe('failed');
    expect(d!.last_error).toMatch(/^given up after \d+ attempts: HTTP 503/);
    expect(d!.attempts).toBeGreaterThanOrEqual(2);
    expect(d!.attempt_log).toHaveLength(d!.attempts);
    expect(rx.requests.length).toBe(d!.attempts);
    expect(d!.attempt_log.at(-1)!.outcome).toBe('failed');
  });
});
