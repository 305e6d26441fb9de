import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilesRepository } from '../../src/files/files.repository.js';
import { TEST_DBS } from '../support/harness.js';
import { api, createAgent, enableWebhook, hook, listTasks, startWebhookWorld, waitTask, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/**
 * task_level_strategies.duplication_prevention end to end: a real server (webhooks, API, worker), a scripted LLM. An
 * event delivered twice within the window runs once; its second delivery is answered with the first one's task.
 */
describe.each(TEST_DBS)('duplicate events (%s)', (kind) => {
  let w: WebhookWorld;
  let orgA: string;
  /** An agent that deduplicates Cal.com-style events by their trigger and booking uid. */
  let agentId: string;
  let url: string;

  const dedup = (selectors: string[], extra: Record<string, unknown> = {}) => ({
    task_level_strategies: { duplication_prevention: { enabled: true, ttl_minutes: 10, selectors, ...extra } },
  });
  const booking = (uid: string, extra: Record<string, unknown> = {}) => ({ triggerEvent: 'BOOKING_CREATED', payload: { uid, title: 'Intro call' }, ...extra });
  const llmCallsFor = (word: string) => w.llm.requests.filter((r) => JSON.stringify(r.body.messages).includes(word)).length;

  beforeAll(async () => {
    w = await startWebhookWorld(kind);
    w.llm.handle(() => ({ text: 'handled' }));
    orgA = (await w.server.container.orgs.findOrganizationByName('org-a'))!.id;
    agentId = await createAgent(w, dedup(['triggerEvent', 'payload.uid']));
    url = await enableWebhook(w, agentId);
  });
  afterAll(async () => w?.close());

  it('answers an asynchronous redelivery with the first delivery task, and runs it once', async () => {
    const first = await hook(w, `${url}?asynchronous=true`, { json: booking('uid-1', { prompt: 'book uid-1' }) });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const id = first.headers.get('x-task-id')!;
    await waitTask(w, id);
    const again = await hook(w, `${url}?asynchronous=true`, { json: booking('uid-1', { prompt: 'book uid-1', delivery: 2 }) });
    expect(again.status).toBe(200);
    expect(again.headers.get('x-task-id')).toBe(id);
    // Another booking is another event.
    const other = await hook(w, `${url}?asynchronous=true`, { json: booking('uid-2', { prompt: 'book uid-2' }) });
    expect(other.headers.get('x-task-id')).not.toBe(id);
    await waitTask(w, other.headers.get('x-task-id')!);
    expect(llmCallsFor('book uid-1')).toBe(1);
    const ids = (await listTasks(w, agentId)).map((t) => t.id);
    expect(ids.filter((x) => x === id)).toHaveLength(1);
    expect(ids).toHaveLength(2);
  });

  it('answers a synchronous redelivery with the first task result', async () => {
    const sync = `${url}?asynchronous=false`;
    const first = await hook(w, sync, { json: booking('uid-sync', { prompt: 'sync booking' }) });
    expect(first.json).toMatchObject({ status: 'completed', result: 'handled' });
    const again = await hook(w, sync, { json: booking('uid-sync', { prompt: 'sync booking' }) });
    expect(again.json).toMatchObject({ id: first.json.id, status: 'completed', result: 'handled' });
    expect(llmCallsFor('sync booking')).toBe(1);
  });

  it('starts one task for simultaneous deliveries of one event', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => hook(w, `${url}?asynchronous=true`, { json: booking('uid-burst', { prompt: 'burst' }) })));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const ids = new Set(answers.map((a) => a.headers.get('x-task-id')));
    expect(ids.size).toBe(1);
    await waitTask(w, [...ids][0]!);
    expect(llmCallsFor('burst')).toBe(1);
  });

  it('does not take calls without every selected value for one event', async () => {
    const before = (await listTasks(w, agentId)).length;
    for (let i = 0; i < 2; i++) {
      const r = await hook(w, `${url}?asynchronous=true`, { json: { triggerEvent: 'BOOKING_CREATED', payload: { title: 'no uid' }, prompt: 'missing uid' } });
      expect(r.status).toBe(200);
      await waitTask(w, r.headers.get('x-task-id')!);
    }
    expect((await listTasks(w, agentId)).length).toBe(before + 2);
  });

  it('reads a selector from the query string when the body lacks it', async () => {
    const a = await hook(w, `${url}?asynchronous=true&triggerEvent=PING`, { json: { payload: { uid: 'q-1' }, prompt: 'query event' } });
    const b = await hook(w, `${url}?asynchronous=true&triggerEvent=PING`, { json: { payload: { uid: 'q-1' }, prompt: 'query event' } });
    expect(b.headers.get('x-task-id')).toBe(a.headers.get('x-task-id'));
  });

  it('runs the event again once its window has passed, or once its task is deleted', async () => {
    const syncUrl = `${url}?asynchronous=false`;
    const first = await hook(w, syncUrl, { json: booking('uid-window', { prompt: 'window' }) });
    // The window passing, without waiting ten minutes: the stored key expires now.
    await w.server.container.db.kysely.updateTable('task_dedup_keys').set({ expires_at: Date.now() - 1 }).where('task_id', '=', first.json.id).execute();
    const after = await hook(w, syncUrl, { json: booking('uid-window', { prompt: 'window' }) });
    expect(after.json.status).toBe('completed');
    expect(after.json.id).not.toBe(first.json.id);
    // The key now belongs to the new task, for a new window.
    expect((await hook(w, syncUrl, { json: booking('uid-window', { prompt: 'window' }) })).json.id).toBe(after.json.id);

    expect((await api(w, 'DELETE', `/v1/tasks/${after.json.id}`)).status).toBe(200);
    const keys = await w.server.container.db.kysely.selectFrom('task_dedup_keys').select('task_id').where('task_id', '=', after.json.id).execute();
    expect(keys).toEqual([]);
    const fresh = await hook(w, syncUrl, { json: booking('uid-window', { prompt: 'window' }) });
    expect(fresh.json.id).not.toBe(after.json.id);
    expect(llmCallsFor('window')).toBe(3);
  });

  it('stores no upload for a duplicate delivery', async () => {
    const files = new FilesRepository(w.server.container.db);
    // Form fields are flat: the selectors name the form's own fields.
    const formAgent = await createAgent(w, dedup(['triggerEvent', 'booking_uid']));
    const formUrl = await enableWebhook(w, formAgent);
    const withUid = () => {
      const fd = new FormData();
      fd.set('prompt', 'with a file');
      fd.set('triggerEvent', 'BOOKING_CREATED');
      fd.set('booking_uid', 'f-1');
      fd.append('files', new Blob([Buffer.from('hello notes')]), 'notes.txt');
      return fd;
    };
    const first = await hook(w, `${formUrl}?asynchronous=false`, { multipart: withUid() });
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const stored = await files.count(orgA);
    const again = await hook(w, `${formUrl}?asynchronous=false`, { multipart: withUid() });
    expect(again.json.id).toBe(first.json.id);
    expect(await files.count(orgA)).toBe(stored);
  });

  it('deduplicates API invocations by their body and counts duplicates in /metrics', async () => {
    const agent = await createAgent(w, dedup(['input.user.id', 'input.text']));
    const body = { input: { text: 'invoice 42 paid', user: { id: 'cust-7' } } };
    const a = await api(w, 'POST', `/v1/agents/${agent}/invoke/async`, body);
    const b = await api(w, 'POST', `/v1/agents/${agent}/invoke`, body);
    expect(a.status).toBe(200);
    expect(b.json.id).toBe(a.json.id);
    expect(b.json.status).toBe('completed');
    const c = await api(w, 'POST', `/v1/agents/${agent}/invoke`, { input: { text: 'invoice 42 paid', user: { id: 'cust-8' } } });
    expect(c.json.id).not.toBe(a.json.id);
    const metrics = await (await fetch(`${w.api}/metrics`)).text();
    expect(metrics).toMatch(/^agentry_duplicate_events_total [1-9]\d*$/m);
  });

  it('validates the setting, and refuses agentic_context_enabled until it acts', async () => {
    const bad = async (tls: unknown) => {
      const r = await api(w, 'POST', '/v1/agents', { name: `bad-${Math.random().toString(36).slice(2)}`, task_level_strategies: tls });
      expect(r.status, JSON.stringify(tls)).toBe(422);
      return r.json.detail as { loc: unknown[]; type: string }[];
    };
    expect((await bad({ duplication_prevention: { enabled: true, selectors: [] } }))[0]!.loc).toEqual(['body', 'task_level_strategies', 'duplication_prevention', 'selectors']);
    await bad({ duplication_prevention: { enabled: true } });
    await bad({ duplication_prevention: { enabled: true, selectors: ['a..b'] } });
    await bad({ duplication_prevention: { enabled: true, selectors: ['id'], ttl_minutes: 0 } });
    await bad({ duplication_prevention: { enabled: true, selectors: ['id'], ttl_minutes: 7 * 24 * 60 + 1 } });
    await bad({ duplication_prevention: { enabled: true, selectors: ['id'], window: 5 } });
    expect(await bad({ agentic_context_enabled: true })).toEqual([expect.objectContaining({ loc: ['body', 'task_level_strategies', 'agentic_context_enabled'], type: 'value_error' })]);
    // What xpander's own agents carry by default is accepted and stored.
    const ok = await api(w, 'POST', '/v1/agents', {
      name: `ok-${Math.random().toString(36).slice(2)}`,
      task_level_strategies: { agentic_context_enabled: false, duplication_prevention: { enabled: false, ttl_minutes: 10, selectors: ['messageId'] } },
    });
    expect(ok.status, JSON.stringify(ok.json)).toBe(201);
    expect(ok.json.task_level_strategies).toMatchObject({ agentic_context_enabled: false, duplication_prevention: { enabled: false, ttl_minutes: 10, selectors: ['messageId'] } });
  });
});
