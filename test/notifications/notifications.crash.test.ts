import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { NotificationReceiver, startReceiver } from '../fakes/notification-receiver.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';
import { killHard, WorkerProcesses } from '../support/processes.js';

/**
 * The outbox survives a crash: a real worker process (`agentry serve`, AGENTRY_ROLES=worker) ends a task, its
 * dispatcher starts the delivery, and the process is killed with SIGKILL before the receiver answers. The task's
 * final status and its outbox row were committed together; a new process delivers it once the claim runs out.
 */
describe.each(TEST_DBS)('notification delivery across a crash (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let rx: NotificationReceiver;
  // One attempt's deadline 2 s: a claim of a dead process runs out after 5 s (notification.dispatcher.ts).
  const workers = new WorkerProcesses(() => t, { AGENTRY_NOTIFY_TIMEOUT_MS: '2000', AGENTRY_NOTIFY_POLL_MS: '200' });

  beforeAll(async () => {
    llm = await startOpenAIServer();
    rx = await startReceiver();
    // No in-process worker or dispatcher: only the spawned processes run tasks and deliver.
    t = await createTasksApp(kind, { worker: false });
  });
  afterEach(() => workers.killAll());
  afterAll(async () => {
    await t?.close();
    await llm?.close();
    await rx?.close();
  });

  it('delivers after a restart when the process dies between the task end and the delivery', { timeout: 120_000 }, async () => {
    llm.handle(() => ({ text: 'finished before the crash' }));
    rx.handle = () => ({ hang: true });
    const agentId = await t.createAgent(openaiAgentFields(llm.baseUrl, { notification_settings: { on_success: { webhook: [{ url: `${rx.url}/hook` }] } } }));
    const secret = (await t.req('POST', `/v1/agents/${agentId}/notifications/signing-secret`)).json().secret as string;
    const task = (await t.req('POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'crash after me' } })).json();

    const first = workers.spawn();
    await rx.waitFor(1, 60_000);
    await killHard(first);
    // The task's end is durable; its delivery was started and never recorded.
    expect((await t.req('GET', `/v1/tasks/${task.id}`)).json()).toMatchObject({ status: 'completed', result: 'finished before the crash' });
    const [pending] = (await t.req('GET', `/v1/tasks/${task.id}/notifications`)).json();
    expect(pending).toMatchObject({ status: 'pending', attempts: 0, attempt_log: [] });

    rx.handle = () => ({ status: 200 });
    workers.spawn();
    const end = Date.now() + 60_000;
    let d = pending;
    while (d.status !== 'delivered' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 100));
      d = (await t.req('GET', `/v1/tasks/${task.id}/notifications`)).json()[0];
    }
    expect(d).toMatchObject({ status: 'delivered', attempts: 1 });
    // Both processes sent the same signed message (same webhook-id): at least once, deduplicable by the receiver.
    expect(rx.requests).toHaveLength(2);
    for (const r of rx.requests) {
      expect(r.headers['webhook-id']).toBe(d.id);
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    }
    expect(JSON.parse(rx.requests[1]!.body).data).toMatchObject({ task_id: task.id, status: 'completed', result: 'finished before the crash' });
  });
});
