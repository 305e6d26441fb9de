import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { api, createAgent, enableWebhook, hook, listTasks, startWebhookWorld, waitTask, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/**
 * Issue 25's smaller items, over real sockets (so JSON webhook calls go through the fast lane, form calls through
 * Fastify): a body `message` is the prompt when `prompt` is absent; `?asynchronous=true` on the plain invoke route.
 */
describe.each(TEST_DBS)('xpander clients: webhook message and asynchronous invoke (%s)', (kind) => {
  let w: WebhookWorld;
  let agentId: string;
  let publicUrl: string;

  beforeAll(async () => {
    w = await startWebhookWorld(kind);
    w.llm.handle((req) => ({ text: `echo: ${req.lastUserText.split('\n')[0]}` }));
    agentId = await createAgent(w);
    publicUrl = await enableWebhook(w, agentId);
  });
  afterAll(async () => w?.close());

  it('takes a body `message` as the prompt when there is no prompt, on the fast lane and on Fastify', async () => {
    const lane = await hook(w, `${publicUrl}?asynchronous=false`, { json: { message: 'hi via json message' } });
    expect(lane.json).toMatchObject({ status: 'completed', result: 'echo: hi via json message' });
    const form = await hook(w, `${publicUrl}?asynchronous=false`, { form: { message: 'hi via form message' } });
    expect(form.json).toMatchObject({ status: 'completed', result: 'echo: hi via form message' });
    const keyed = await hook(w, `/?agent_id=${agentId}`, { json: { message: 'hi via key form' }, headers: { 'x-api-key': w.keyA } });
    expect(keyed.json).toMatchObject({ status: 'completed', result: 'echo: hi via key form' });
    // The message was the prompt, so it is not context as well.
    const task = (await api(w, 'GET', `/v1/tasks/${lane.json.id}`)).json;
    expect(task.input.text).toBe('hi via json message');
    expect(task.additional_context).toBeNull();
  });

  it('keeps `prompt` first: a `message` beside it is context; a non-text message is never the prompt', async () => {
    const both = await hook(w, `${publicUrl}?asynchronous=false`, { json: { prompt: 'the prompt', message: 'just context' } });
    expect(both.json).toMatchObject({ result: 'echo: the prompt' });
    expect(JSON.parse((await api(w, 'GET', `/v1/tasks/${both.json.id}`)).json.additional_context)).toEqual({ message: 'just context' });
    const before = (await listTasks(w, agentId)).length;
    const nested = await hook(w, `${publicUrl}?asynchronous=false`, { json: { message: { text: 'nested' } } });
    const nestedTask = (await api(w, 'GET', `/v1/tasks/${nested.json.id}`)).json;
    expect(nestedTask.input.text).toBe('');
    expect(JSON.parse(nestedTask.additional_context)).toEqual({ message: { text: 'nested' } });
    expect((await listTasks(w, agentId)).length).toBe(before + 1);
  });

  it('POST /v1/agents/{id}/invoke?asynchronous=true answers the pending task; the run completes', async () => {
    const r = await api(w, 'POST', `/v1/agents/${agentId}/invoke?asynchronous=true`, { input: { text: 'later' } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ agent_id: agentId, status: 'pending', result: null });
    expect(await waitTask(w, r.json.id)).toMatchObject({ status: 'completed', result: 'echo: later' });
    // Without it the route waits, as before; a bad value names the parameter.
    expect((await api(w, 'POST', `/v1/agents/${agentId}/invoke?asynchronous=false`, { input: { text: 'now' } })).json).toMatchObject({ status: 'completed', result: 'echo: now' });
    const bad = await api(w, 'POST', `/v1/agents/${agentId}/invoke?asynchronous=maybe`, { input: { text: 'x' } });
    expect([bad.status, bad.json.detail[0].loc]).toEqual([422, ['query', 'asynchronous']]);
  });
});
