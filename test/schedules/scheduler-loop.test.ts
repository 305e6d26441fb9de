import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { createTestEnv, startTestServer, TEST_DBS, type TestEnv } from '../support/harness.js';

/** The worker role starts the scheduler on its own: a real server, the system clock, a one-off a moment ahead. */
describe.each(TEST_DBS)('scheduler in the worker role (%s)', (kind) => {
  let env: TestEnv;
  let server: RunningServer;
  let key: string;
  beforeAll(async () => {
    env = await createTestEnv(kind);
    server = await startTestServer(env, { AGENTRY_SCHEDULER_POLL_MS: '100' });
    key = (await server.container.orgs.createApiKey('org-loop', 'test')).key;
  });
  afterAll(async () => {
    await server?.stop();
    await env?.cleanup();
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${server.apiUrl}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  };

  it('fires a due one-off without anyone calling it', async () => {
    const agent = (await api('POST', '/v1/agents', { name: 'looped' })).body.id;
    const runAt = new Date(Date.now() + 1500).toISOString();
    const s = await api('POST', `/v1/agents/${agent}/schedules`, { run_at: runAt, invocation: { input: { text: 'on time' } } });
    expect(s.status).toBe(201);
    const end = Date.now() + 15_000;
    let tasks: { items: { source: string; schedule_id: string }[] } = { items: [] };
    while (Date.now() < end && tasks.items.length === 0) {
      await new Promise((r) => setTimeout(r, 100));
      tasks = (await api('GET', `/v1/agents/${agent}/schedules/${s.body.id}/tasks`)).body;
    }
    expect(tasks.items).toHaveLength(1);
    expect(tasks.items[0]).toMatchObject({ source: 'schedule', schedule_id: s.body.id });
    expect((await api('GET', `/v1/agents/${agent}/schedules/${s.body.id}`)).body).toMatchObject({ status: 'finished', run_count: 1 });
  });
});
