import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { api, hook, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/** A workflow's orchestration agent is invoked like any agent: through its webhook, synchronously and not. */
describe.each(TEST_DBS)('workflow through a webhook (%s)', (kind) => {
  let w: WebhookWorld;
  beforeAll(async () => {
    w = await startWebhookWorld(kind);
  });
  afterAll(async () => {
    await w?.close();
  });

  it('runs the workflow for a webhook call and answers its result', { timeout: 60_000 }, async () => {
    const fn = await api(w, 'POST', '/v1/custom_functions', { name: 'shout', code: 'async function run({ text }) { return text.toUpperCase() + "!"; }', input_schema: { type: 'object', properties: { text: { type: 'string' } } } });
    expect(fn.status).toBe(201);
    const wf = await api(w, 'POST', '/v1/workflows', {
      name: `hooked-${kind}`,
      steps: [
        { id: 'shout', type: 'custom_function', custom_function_id: fn.json.id, input: { text: '{{input.text}}' }, next: 'twice' },
        { id: 'twice', type: 'custom_function', custom_function_id: fn.json.id, input: { text: '{{steps.shout.output}}' } },
      ],
    });
    expect(wf.status, JSON.stringify(wf.json)).toBe(201);
    const sync = await hook(w, `/?agent_id=${wf.json.agent_id}`, { json: { prompt: 'hello' }, headers: { 'x-api-key': w.keyA } });
    expect(sync.status).toBe(200);
    expect(sync.json).toMatchObject({ status: 'completed', result: 'HELLO!!' });
    const later = await hook(w, `/?agent_id=${wf.json.agent_id}&asynchronous=true`, { json: { prompt: 'again' }, headers: { 'x-api-key': w.keyA } });
    expect(later.json).toEqual({ status: 'Started' });
    const taskId = later.headers.get('x-task-id')!;
    for (let i = 0; i < 200; i++) {
      const task = await api(w, 'GET', `/v1/tasks/${taskId}`);
      if (task.json?.status === 'completed') return expect(task.json.result).toBe('AGAIN!!');
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the asynchronous run never completed');
  });
});
