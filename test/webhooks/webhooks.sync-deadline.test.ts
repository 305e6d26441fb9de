import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { createAgent, enableWebhook, hook, startWebhookWorld, waitTask, type WebhookWorld } from './webhook-helpers.js';

describe.each(TEST_DBS)('synchronous webhook deadline (%s)', (kind) => {
  let w: WebhookWorld;
  beforeAll(async () => {
    w = await startWebhookWorld(kind, { AGENTRY_SYNC_TIMEOUT_MS: '300' });
  });
  afterAll(async () => w?.close());

  it('answers the spec 2.7 object as the task stands when the deadline passes, and the task still completes', async () => {
    w.llm.reply({ text: 'slow answer', delayMs: 1500 });
    const url = await enableWebhook(w, await createAgent(w));
    const r = await hook(w, `${url}?asynchronous=false`, { json: { prompt: 'take your time', task_id: 'slow-1' } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: 'slow-1', finished_at: null, result: null, source: 'webhook' });
    expect(['pending', 'executing']).toContain(r.json.status);
    expect(await waitTask(w, 'slow-1')).toMatchObject({ status: 'completed', result: 'slow answer' });
  });
});
