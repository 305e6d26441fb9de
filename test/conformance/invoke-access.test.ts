import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/** Spec 2.1 `developer_access`: "When false, invocation through the API and webhooks is rejected." */
describe.each(TEST_DBS)('conformance: developer_access on the invoke API (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('refuses every API invocation of an agent whose developer access is off, and creates no task', async () => {
    const agent = (await t.req('POST', '/v1/agents', { name: 'closed', developer_access: false })).json().id as string;
    for (const path of ['invoke', 'invoke/async', 'invoke/stream']) {
      const r = await t.req('POST', `/v1/agents/${agent}/${path}`, { input: { text: 'hi' } });
      expect(r.statusCode).toBe(403);
      expect(r.json()).toEqual({ detail: 'Developer access is disabled for this agent' });
    }
    expect((await t.req('GET', `/v1/agents/${agent}/tasks`)).json().total).toBe(0);
    // Turned back on (published at once), the same call is accepted.
    expect((await t.req('PATCH', `/v1/agents/${agent}?deploy=true`, { developer_access: true })).statusCode).toBe(200);
    const ok = await t.req('POST', `/v1/agents/${agent}/invoke/async`, { input: { text: 'hi' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ agent_id: agent, status: 'pending', source: 'api' });
  });
});
