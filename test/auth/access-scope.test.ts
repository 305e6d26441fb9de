import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { createTestApp, createTestEnv, TEST_DBS, type TestApp } from '../support/harness.js';
import { api, createAgent, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/**
 * `access_scope` (docs/access.md): a personal agent (the default) is seen, listed and run only by the principal that
 * created it (and the organization's admins); `organizational` agents by every key of the organization. Ownership is
 * the authenticated key, never the caller-writable `created_by`.
 */
describe.each(TEST_DBS)('access_scope (%s)', (kind) => {
  let t: TestApp;
  let alice: string;
  let bob: string;
  let reader: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    const key = async (name: string, role: string) => (await t.req('POST', '/v1/api_keys', { name, role })).json().key as string;
    alice = await key('alice', 'member');
    bob = await key('bob', 'member');
    reader = await key('reader', 'read-only');
  });
  afterAll(async () => t?.close());

  const as = (key: string) => ({ 'x-api-key': key });
  const listed = async (key: string) => ((await t.req('GET', '/v1/agents?per_page=50', undefined, as(key))).json().items as { id: string }[]).map((a) => a.id);

  it("hides a member's personal agent from other members, not from its owner or admins", async () => {
    // created_by is only a label: claiming bob's name gives bob nothing.
    const mine = (await t.req('POST', '/v1/agents', { name: 'alice-personal', created_by: 'bob' }, as(alice))).json();
    expect(mine.access_scope).toBe('personal');
    const shared = (await t.req('POST', '/v1/agents', { name: 'alice-shared', access_scope: 'organizational' }, as(alice))).json();
    expect(await listed(alice)).toEqual(expect.arrayContaining([mine.id, shared.id]));
    expect(await listed(t.keyA)).toEqual(expect.arrayContaining([mine.id, shared.id]));
    for (const key of [bob, reader]) {
      expect(await listed(key)).toContain(shared.id);
      expect(await listed(key)).not.toContain(mine.id);
    }
    expect((await t.req('GET', '/v1/agents?per_page=50', undefined, as(bob))).json().total).toBe((await listed(bob)).length);
    expect((await t.req('GET', `/v1/agents/${mine.id}`, undefined, as(bob))).json()).toEqual({ detail: 'Agent not found' });
    expect((await t.req('POST', `/v1/agents/${mine.id}/invoke/async`, { input: { text: 'x' } }, as(bob))).statusCode).toBe(404);
    expect((await t.req('POST', `/v1/agents/${shared.id}/invoke/async`, { input: { text: 'x' } }, as(bob))).statusCode).toBe(200);
  });

  it("hides the tasks of another's personal agent from lists and reads", async () => {
    const mine = (await t.req('POST', '/v1/agents', { name: 'alice-tasks' }, as(alice))).json();
    const task = (await t.req('POST', `/v1/agents/${mine.id}/invoke/async`, { input: { text: 'secret plans' } }, as(alice))).json();
    const ids = async (key: string) => ((await t.req('GET', '/v1/tasks?per_page=50', undefined, as(key))).json().items as { id: string }[]).map((x) => x.id);
    expect(await ids(alice)).toContain(task.id);
    expect(await ids(t.keyA)).toContain(task.id);
    expect(await ids(bob)).not.toContain(task.id);
    expect((await t.req('GET', `/v1/tasks/${task.id}`, undefined, as(bob))).statusCode).toBe(404);
    // Published as organizational, it is everyone's, with its tasks.
    const patched = await t.req('PATCH', `/v1/agents/${mine.id}?deploy=true`, { access_scope: 'organizational' }, as(alice));
    expect(patched.statusCode).toBe(200);
    expect(await ids(bob)).toContain(task.id);
    expect((await t.req('GET', `/v1/agents/${mine.id}`, undefined, as(bob))).statusCode).toBe(200);
  });

  it('refuses the key form of the webhook for a personal agent of someone else', async () => {
    const mine = (await t.req('POST', '/v1/agents', { name: 'alice-hook' }, as(alice))).json();
    const call = (key: string) =>
      t.webhooks.inject({ method: 'POST', url: `/?agent_id=${mine.id}`, headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: JSON.stringify({ prompt: 'x', asynchronous: true }) });
    // As for a missing agent in key form (spec 7.2 lists no 404 for the receiver): not a key for that agent.
    const refused = await call(bob);
    expect([refused.statusCode, refused.json()]).toEqual([403, { detail: 'Invalid API key' }]);
    expect((await call(alice)).statusCode).toBe(200);
    // A read-only key runs nothing.
    expect((await call(reader)).statusCode).toBe(403);
  });
});

describe.each(TEST_DBS)('migration 0015 (%s)', (kind) => {
  it('makes existing keys admins and records owners only where created_by is a key of the organization', async () => {
    const env = await createTestEnv(kind);
    const db = openDatabase({ url: env.env.DATABASE_URL, sqlitePath: `${env.dataDir}/agentry.db` });
    try {
      const k = db.kysely as unknown as Kysely<any>;
      await sql`create table if not exists agentry_migrations (name text primary key, applied_at bigint not null)`.execute(k);
      const before = migrations.slice(0, migrations.findIndex((m) => m.name === '0015_access'));
      for (const m of before) {
        await m.up(k, db.dialect, {});
        await k.insertInto('agentry_migrations').values({ name: m.name, applied_at: 1 }).execute();
      }
      await k.insertInto('organizations').values({ id: 'org', name: 'org', created_at: 1 }).execute();
      await k.insertInto('api_keys').values({ id: 'key-1', organization_id: 'org', lookup: 'l1', key_hash: 'h', name: null, created_at: 1, revoked_at: null }).execute();
      const agent = (id: string, createdBy: string, scope: string) => ({
        id, organization_id: 'org', name: id, unique_name: id, status: 'ACTIVE', current_version: 2, config: JSON.stringify({ name: id, access_scope: scope }),
        draft: null, created_by: createdBy, created_at: 1, updated_at: 1, deleted_at: null,
      });
      await k.insertInto('agents').values([agent('a-own', 'key-1', 'personal'), agent('a-org', 'key-1', 'organizational'), agent('a-label', 'bob', 'personal')]).execute();
      await migrate(db);
      expect((await k.selectFrom('api_keys').select('role').executeTakeFirstOrThrow()).role).toBe('admin');
      const rows = await k.selectFrom('agents').select(['id', 'owner', 'personal']).orderBy('id').execute();
      expect(rows.map((r) => [r.id, r.owner, Number(r.personal)])).toEqual([
        ['a-label', null, 0],
        ['a-org', 'api_key:key-1', 0],
        ['a-own', 'api_key:key-1', 1],
      ]);
    } finally {
      await db.close();
      await env.cleanup();
    }
  });
});

describe.each(TEST_DBS)('access_scope of sub-agents (%s)', (kind) => {
  let w: WebhookWorld;
  beforeAll(async () => {
    w = await startWebhookWorld(kind);
    // The model calls the agent tool it is offered once, then reports what the tool answered.
    w.llm.handle((req) => {
      const tool = req.tools.find((n) => n.startsWith('agent_'));
      const answered = (req.body.messages as { role: string; content: unknown }[]).filter((m) => m.role === 'tool');
      if (tool && answered.length === 0) return { toolCalls: [{ name: tool, arguments: { input: 'help' } }] };
      return { text: `tool said: ${answered.map((m) => JSON.stringify(m.content)).join(' ')}` };
    });
  });
  afterAll(async () => w?.close());

  it("lets an agent call its owner's personal agents, not another member's", async () => {
    const key = async (name: string) => (await api(w, 'POST', '/v1/api_keys', { name, role: 'member' })).json.key as string;
    const [alice, bob] = [await key('alice'), await key('bob')];
    const bobs = await createAgent(w, { name: 'bobchild' }, bob);
    const alices = await createAgent(w, { name: 'alicechild' }, alice);
    const run = async (child: string) => {
      const parent = await createAgent(w, { tools: [{ type: 'agent', agent_id: child }] }, alice);
      return (await api(w, 'POST', `/v1/agents/${parent}/invoke`, { input: { text: 'go' } }, alice)).json;
    };
    const own = await run(alices);
    expect(own.status).toBe('completed');
    expect(own.sub_executions).toHaveLength(1);
    // Refused when the agent is saved, like an unknown agent: bob's agent's name does not show.
    const refused = await api(w, 'POST', '/v1/agents', { name: 'calls-bob', tools: [{ type: 'agent', agent_id: bobs }] }, alice);
    expect(refused.status).toBe(422);
    expect(refused.json.detail[0]).toMatchObject({ loc: ['body', 'tools', 0, 'agent_id'], msg: expect.stringContaining('not found') });
    expect(JSON.stringify(refused.json)).not.toContain('bobchild');
    // And at run time, should bob's agent become personal after the wiring (published by bob).
    const shared = await createAgent(w, { name: 'bobshared', access_scope: 'organizational' }, bob);
    const parent = await createAgent(w, { tools: [{ type: 'agent', agent_id: shared }] }, alice);
    expect((await api(w, 'PATCH', `/v1/agents/${shared}?deploy=true`, { access_scope: 'personal' }, bob)).status).toBe(200);
    const foreign = (await api(w, 'POST', `/v1/agents/${parent}/invoke`, { input: { text: 'go' } }, alice)).json;
    expect(foreign.result).toContain('Agent not found');
    expect(foreign.sub_executions ?? []).toHaveLength(0);
    expect((await api(w, 'GET', `/v1/agents/${shared}/tasks`, undefined, bob)).json.total).toBe(0);
  });
});
