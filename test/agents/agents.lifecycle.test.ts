import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';
import { createAgent, expectIssue } from './support.js';

describe.each(TEST_DBS)('agent lifecycle (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('gets one agent; lists them paged and minimal; lists them in full', async () => {
    const made: Record<string, any>[] = [];
    for (let i = 0; i < 3; i++) made.push(await createAgent(t, { name: `List ${i}`, description: `d${i}` }));
    const one = await t.req('GET', `/v1/agents/${made[0].id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(made[0]);

    const page = (await t.req('GET', '/v1/agents?per_page=2')).json();
    expect(page).toMatchObject({ total: 3, page: 1, per_page: 2, total_pages: 2 });
    expect(page.items).toHaveLength(2);
    expect(Object.keys(page.items[0]).sort()).toEqual(
      ['id', 'name', 'unique_name', 'description', 'icon', 'status', 'type', 'model_provider', 'model_name', 'created_at', 'has_pending_changes'].sort(),
    );
    const page2 = (await t.req('GET', '/v1/agents?per_page=2&page=2')).json();
    const ids = [...page.items, ...page2.items].map((i: { id: string }) => i.id);
    expect(new Set(ids)).toEqual(new Set(made.map((m) => m.id)));

    const full = (await t.req('GET', '/v1/agents/full?per_page=50')).json();
    expect(full.total).toBe(3);
    expect(full.items.find((i: { id: string }) => i.id === made[1].id)).toEqual(made[1]);

    expectIssue(await t.req('GET', '/v1/agents?per_page=51'), ['query', 'per_page'], 'less_than_equal');
    expectIssue(await t.req('GET', '/v1/agents?page=0'), ['query', 'page'], 'greater_than_equal');
    expect((await t.req('GET', '/v1/agents/0190f1f0-0000-7000-8000-000000000000')).json()).toEqual({ detail: 'Agent not found' });
  });

  it('stages a PATCH as a draft, deploys it as version + 1, keeps every version immutable', async () => {
    const a = await createAgent(t, { name: 'Staged', instructions: { role: ['r'], goal: ['g'], general: 'x' } });
    const p = await t.req('PATCH', `/v1/agents/${a.id}`, { description: 'new', agno_settings: { num_history_runs: 3 }, instructions: { general: 'y' } });
    expect(p.statusCode, p.body).toBe(200);
    const draft = p.json();
    expect(draft).toMatchObject({ version: 2, has_pending_changes: true, is_latest: false, description: 'new', instructions: { role: ['r'], goal: ['g'], general: 'y' } });
    // Nested settings merge key by key.
    expect(draft.agno_settings).toMatchObject({ num_history_runs: 3, session_storage: true, max_plan_retries: 15 });
    expect((await t.req('GET', `/v1/agents/${a.id}`)).json()).toEqual(draft);
    expect((await t.req('GET', '/v1/agents?per_page=50')).json().items.find((i: { id: string }) => i.id === a.id).has_pending_changes).toBe(true);

    // Invocations keep running the published version until deployment.
    const published = await t.c.agents.getRunnable(t.orgA, a.id);
    expect(published.version).toBe(2);
    expect(published.config.description).toBe('');
    const staged = await t.c.agents.getRunnable(t.orgA, a.id, 'draft');
    expect(staged.version).toBe('draft');
    expect(staged.config.description).toBe('new');

    const d = await t.req('PUT', `/v1/agents/${a.id}`);
    expect(d.statusCode).toBe(200);
    expect(d.json()).toMatchObject({ version: 3, has_pending_changes: false, is_latest: true, description: 'new' });
    expect((await t.c.agents.getRunnable(t.orgA, a.id)).version).toBe(3);

    const versions = (await t.req('GET', `/v1/agents/${a.id}/versions`)).json();
    expect(versions.items.map((v: { version: number }) => v.version)).toEqual([3, 2]);
    expect(versions.items[0].is_latest).toBe(true);
    const v2 = (await t.req('GET', `/v1/agents/${a.id}/versions/2`)).json();
    expect(v2).toMatchObject({ version: 2, description: '', is_latest: false, has_pending_changes: false });
    expect((await t.c.agents.getRunnable(t.orgA, a.id, 2)).config.description).toBe('');
    expect((await t.req('GET', `/v1/agents/${a.id}/versions/3`)).json()).toMatchObject({ version: 3, description: 'new', is_latest: true });
    expect((await t.req('GET', `/v1/agents/${a.id}/versions/9`)).json()).toEqual({ detail: 'Agent version not found' });
    expectIssue(await t.req('GET', `/v1/agents/${a.id}/versions/abc`), ['path', 'version'], 'int_parsing');
    await expect(t.c.agents.getRunnable(t.orgA, a.id, 9)).rejects.toMatchObject({ status: 404 });

    // Deploying without a draft publishes the same configuration again.
    expect((await t.req('PUT', `/v1/agents/${a.id}`)).json().version).toBe(4);
  });

  it('publishes at once with ?deploy=true or with staging off', async () => {
    const a = await createAgent(t, { name: 'Direct' });
    const p = (await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { expected_output: 'x' })).json();
    expect(p).toMatchObject({ version: 3, has_pending_changes: false, expected_output: 'x' });
    const off = (await t.req('PATCH', `/v1/agents/${a.id}`, { should_stage_before_publish: false, voice_id: 'v' })).json();
    expect(off).toMatchObject({ version: 4, has_pending_changes: false, voice_id: 'v', should_stage_before_publish: false });
    const again = (await t.req('PATCH', `/v1/agents/${a.id}`, { voice_id: 'w' })).json();
    expect(again).toMatchObject({ version: 5, has_pending_changes: false, voice_id: 'w' });
  });

  it('reads ?deploy as webhook booleans are read: true/false/1/0/yes/no in any case, anything else 422', async () => {
    const a = await createAgent(t, { name: 'Booleans' });
    expect((await t.req('PATCH', `/v1/agents/${a.id}?deploy=YES`, { expected_output: 'y' })).json()).toMatchObject({ version: 3, has_pending_changes: false });
    expect((await t.req('PATCH', `/v1/agents/${a.id}?deploy=False`, { expected_output: 'z' })).json()).toMatchObject({ version: 3, has_pending_changes: true });
    const refused = await t.req('PATCH', `/v1/agents/${a.id}?deploy=maybe`, { expected_output: 'never' });
    expectIssue(refused, ['query', 'deploy'], 'bool_parsing', /valid boolean/);
    // Nothing of a refused request is kept.
    expect((await t.req('GET', `/v1/agents/${a.id}`)).json()).toMatchObject({ version: 3, expected_output: 'z' });
  });

  it('validates a PATCH like a create', async () => {
    const a = await createAgent(t, { name: 'Patchable' });
    await createAgent(t, { name: 'Taken' });
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { name: 'Taken' }), ['body', 'name'], 'value_error', /already exists/);
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { type: 'orchestration' }), ['body', 'type'], 'value_error');
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { id: 'x' }), ['body', 'id'], 'extra_forbidden');
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { version: 7 }), ['body', 'version'], 'extra_forbidden');
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { max_self_schedules: 1001 }), ['body', 'max_self_schedules'], 'less_than_equal');
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { agno_settings: { nope: true } }), ['body', 'agno_settings', 'nope'], 'extra_forbidden');
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { status: 'PAUSED' }), ['body', 'status'], 'enum');
    expectIssue(await t.req('PATCH', `/v1/agents/${a.id}`, { tools: [{ type: 'agent', agent_id: a.id }] }), ['body', 'tools', 0, 'agent_id'], 'value_error', /own sub-agent/);
    // Renaming to its own name is fine, and the old name is free again after a rename.
    expect((await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { name: 'Patchable' })).statusCode).toBe(200);
    expect((await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { name: 'Renamed' })).json().name).toBe('Renamed');
    await createAgent(t, { name: 'Patchable' });
  });

  it('moves model_name with the provider and substitutes deprecated models', async () => {
    const a = await createAgent(t, { name: 'Models' });
    expect((await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { model_provider: 'gemini' })).json()).toMatchObject({ model_provider: 'gemini', model_name: 'gemini-2.5-flash' });
    expect((await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { model_name: 'gemini-1.5-pro' })).json().model_name).toBe('gemini-2.5-pro');
    expect((await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { model_name: ' gemini-2.5-flash \t' })).json().model_name).toBe('gemini-2.5-flash');
  });

  it('keeps stored credentials when "********" is written back', async () => {
    const a = await createAgent(t, { name: 'Creds', llm_credentials: { name: 'k', value: 'secret-one' } });
    await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { llm_credentials: { name: 'k2', value: '********' } });
    let run = await t.c.agents.getRunnable(t.orgA, a.id);
    expect(run.config.llm_credentials).toEqual({ name: 'k2', description: null, value: 'secret-one' });
    await t.req('PATCH', `/v1/agents/${a.id}?deploy=true`, { llm_credentials: { name: 'k2', value: 'secret-two' } });
    run = await t.c.agents.getRunnable(t.orgA, a.id);
    expect((run.config.llm_credentials as { value: string }).value).toBe('secret-two');
  });

  it('turns an agent INACTIVE and back with PATCH status, at once and without a new version', async () => {
    const a = await createAgent(t, { name: 'Switch' });
    const off = (await t.req('PATCH', `/v1/agents/${a.id}`, { status: 'INACTIVE' })).json();
    expect(off).toMatchObject({ status: 'INACTIVE', version: 2, has_pending_changes: false });
    expect((await t.c.agents.getRunnable(t.orgA, a.id)).status).toBe('INACTIVE');
    expect(await t.c.agents.find(t.orgA, a.id)).toMatchObject({ id: a.id, status: 'INACTIVE', developerAccess: true, version: 2 });
    // With other fields the status still applies at once while the fields are staged.
    const on = (await t.req('PATCH', `/v1/agents/${a.id}`, { status: 'ACTIVE', description: 'back' })).json();
    expect(on).toMatchObject({ status: 'ACTIVE', has_pending_changes: true, description: 'back' });
    expect((await t.c.agents.getRunnable(t.orgA, a.id)).status).toBe('ACTIVE');
  });

  it('deletes with 202; refuses with 409 when not deletable; tasks domain sees it gone', async () => {
    const a = await createAgent(t, { name: 'Doomed' });
    const r = await t.req('DELETE', `/v1/agents/${a.id}`);
    expect(r.statusCode).toBe(202);
    expect((await t.req('GET', `/v1/agents/${a.id}`)).statusCode).toBe(404);
    expect((await t.req('DELETE', `/v1/agents/${a.id}`)).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/agents/${a.id}/versions`)).statusCode).toBe(404);
    expect((await t.req('GET', '/v1/agents/full?per_page=50')).json().items.some((i: { id: string }) => i.id === a.id)).toBe(false);
    expect(await t.c.agents.exists(t.orgA, a.id)).toBe(false);
    expect(await t.c.agents.find(t.orgA, a.id)).toBeUndefined();
    await expect(t.c.agents.getRunnable(t.orgA, a.id)).rejects.toMatchObject({ status: 404, message: 'Agent not found' });
    // The row stays (tasks keep referring to it); the name is free again.
    expect(await t.c.db.kysely.selectFrom('agents').select('id').where('id', '=', a.id).executeTakeFirst()).toBeDefined();
    await createAgent(t, { name: 'Doomed' });

    const keep = await createAgent(t, { name: 'Keeper', deletable: false });
    const refused = await t.req('DELETE', `/v1/agents/${keep.id}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ detail: 'Agent is not deletable' });
    await t.req('PATCH', `/v1/agents/${keep.id}?deploy=true`, { deletable: true });
    expect((await t.req('DELETE', `/v1/agents/${keep.id}`)).statusCode).toBe(202);
  });

  it('keeps organizations apart (keys from c.orgs.createApiKey)', async () => {
    const one = await t.c.orgs.createApiKey('isolation-one');
    const two = await t.c.orgs.createApiKey('isolation-two');
    const as = (key: string) => ({ 'x-api-key': key });
    const a = await createAgent(t, { name: 'Private' }, one.key);
    expect(a.organization_id).toBe(one.organization.id);
    for (const [method, url, body] of [
      ['GET', `/v1/agents/${a.id}`],
      ['PATCH', `/v1/agents/${a.id}`, { description: 'mine now' }],
      ['PUT', `/v1/agents/${a.id}`],
      ['DELETE', `/v1/agents/${a.id}`],
      ['GET', `/v1/agents/${a.id}/versions`],
      ['GET', `/v1/agents/${a.id}/versions/2`],
      ['GET', `/v1/agents/${a.id}/tools`],
    ] as const) {
      const r = await t.req(method, url, body, as(two.key));
      expect(r.statusCode, `${method} ${url}`).toBe(404);
      expect(r.json()).toEqual({ detail: 'Agent not found' });
    }
    expect((await t.req('GET', '/v1/agents', undefined, as(two.key))).json().total).toBe(0);
    expect((await t.req('GET', '/v1/agents/full', undefined, as(two.key))).json().items).toEqual([]);
    expectIssue(await t.req('POST', '/v1/agents', { name: 'Thief', tools: [{ type: 'agent', agent_id: a.id }] }, as(two.key)), ['body', 'tools', 0, 'agent_id'], 'value_error');
    await expect(t.c.agents.getRunnable(two.organization.id, a.id)).rejects.toMatchObject({ status: 404 });
    expect(await t.c.agents.exists(two.organization.id, a.id)).toBe(false);
    // Untouched by the other organization's attempts.
    const still = (await t.req('GET', `/v1/agents/${a.id}`, undefined, as(one.key))).json();
    expect(still).toEqual(a);
  });
});
