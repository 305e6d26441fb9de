import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { api, createAgent, enableWebhook, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';
import { NotificationReceiver, startReceiver } from '../fakes/notification-receiver.js';

/**
 * A webhook caller's `callback_url` (body or query), over real sockets: JSON calls are answered by the fast lane
 * (src/http/webhook-fast-lane.ts), forms by the Fastify routes. Both answer exactly `{"status":"Started"}` with the
 * task id in `x-task-id`, and the callback receives the same signed payload as the agent's webhooks.
 */
describe.each(TEST_DBS)('webhook callback_url (%s)', (kind) => {
  let w: WebhookWorld;
  let rx: NotificationReceiver;
  let agentId: string;
  let publicUrl: string;
  let secret: string;

  beforeAll(async () => {
    w = await startWebhookWorld(kind, { AGENTRY_NOTIFY_POLL_MS: '50' });
    w.llm.handle((req) => ({ text: `answer to ${req.lastUserText}` }));
    agentId = await createAgent(w, { name: `Callback agent ${kind}` });
    publicUrl = await enableWebhook(w, agentId);
    secret = (await api(w, 'POST', `/v1/agents/${agentId}/notifications/signing-secret`)).json.secret;
  });
  afterAll(async () => {
    await rx?.close();
    await w?.close();
  });
  afterEach(async () => {
    await rx?.close();
  });

  const post = (url: string, body: string, type: string, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': type, ...headers }, body });

  async function expectCallback(res: Response, prompt: string): Promise<void> {
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"status":"Started"}');
    const taskId = res.headers.get('x-task-id');
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    const got = await rx.waitFor(1);
    const r = got[0]!;
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    expect(JSON.parse(r.body)).toMatchObject({
      type: 'task.completed',
      data: { task_id: taskId, agent_id: agentId, agent_name: `Callback agent ${kind}`, status: 'completed', result: `answer to ${prompt}` },
    });
    const ds = (await api(w, 'GET', `/v1/tasks/${taskId}/notifications`)).json;
    expect(ds).toEqual([expect.objectContaining({ channel: 'callback', target: `${rx.url}/cb`, status: expect.stringMatching(/pending|delivered/) })]);
  }

  it('fast lane (JSON): callback_url in the body', async () => {
    rx = await startReceiver();
    await expectCallback(await post(publicUrl, JSON.stringify({ prompt: 'json body', callback_url: `${rx.url}/cb` }), 'application/json'), 'json body');
  });

  it('fast lane (JSON, key form): callback_url in the query', async () => {
    rx = await startReceiver();
    const url = `${w.hooks}/?agent_id=${agentId}&asynchronous=true&callback_url=${encodeURIComponent(`${rx.url}/cb`)}`;
    await expectCallback(await post(url, JSON.stringify({ prompt: 'json query' }), 'application/json', { 'x-api-key': w.keyA }), 'json query');
  });

  it('Fastify route (form): callback_url in the form body', async () => {
    rx = await startReceiver();
    const body = new URLSearchParams({ prompt: 'form body', callback_url: `${rx.url}/cb` }).toString();
    await expectCallback(await post(publicUrl, body, 'application/x-www-form-urlencoded'), 'form body');
  });

  it('an asynchronous call without callback_url also carries x-task-id, and its task has no deliveries', async () => {
    const res = await post(publicUrl, JSON.stringify({ prompt: 'plain' }), 'application/json');
    expect(await res.text()).toBe('{"status":"Started"}');
    const taskId = res.headers.get('x-task-id')!;
    const end = Date.now() + 20_000;
    for (;;) {
      const task = (await api(w, 'GET', `/v1/tasks/${taskId}`)).json;
      if (task.status === 'completed') break;
      if (Date.now() > end) throw new Error(`task stayed ${task.status}`);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect((await api(w, 'GET', `/v1/tasks/${taskId}/notifications`)).json).toEqual([]);
  });

  it('refuses a callback_url that is not an http(s) URL with a 422 on both transports, storing nothing', async () => {
    const before = (await api(w, 'GET', `/v1/agents/${agentId}/tasks?per_page=1`)).json.total;
    const json = await post(publicUrl, JSON.stringify({ prompt: 'x', callback_url: 'javascript:alert(1)' }), 'application/json');
    expect(json.status).toBe(422);
    expect(json.headers.get('x-task-id')).toBeNull();
    expect((await json.json()).detail[0]).toMatchObject({ loc: ['body', 'callback_url'], type: 'value_error' });
    const form = await post(`${publicUrl}?callback_url=ftp%3A%2F%2Fexample.com`, 'prompt=x', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(422);
    expect((await form.json()).detail[0]).toMatchObject({ loc: ['query', 'callback_url'], type: 'value_error' });
    expect((await api(w, 'GET', `/v1/agents/${agentId}/tasks?per_page=1`)).json.total).toBe(before);
  });
});

describe.each(TEST_DBS)('x-task-id of a task still in the inbox (%s)', (kind) => {
  it('GET /v1/tasks/{x-task-id} finds the task at once, with no worker having moved it yet', async () => {
    const { createTestApp } = await import('../support/harness.js');
    // No worker role: nothing settles the task inbox but the reads themselves.
    const t = await createTestApp(kind);
    try {
      const agent = (await t.req('POST', '/v1/agents', { name: 'inbox agent' })).json();
      const enabled = (await t.req('POST', `/v1/agents/${agent.id}/webhook`)).json();
      const path = new URL(enabled.url).pathname;
      const res = await t.webhooks.inject({ method: 'POST', url: path, payload: { prompt: 'queued' } });
      expect(res.body).toBe('{"status":"Started"}');
      const id = res.headers['x-task-id'] as string;
      expect((await t.c.db.kysely.selectFrom('tasks').select('id').where('id', '=', id).execute()).length).toBe(0);
      const got = await t.req('GET', `/v1/tasks/${id}`);
      expect(got.statusCode).toBe(200);
      expect(got.json()).toMatchObject({ id, status: 'pending', source: 'webhook' });
      expect((await t.req('GET', `/v1/tasks/${id}/notifications`)).json()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
