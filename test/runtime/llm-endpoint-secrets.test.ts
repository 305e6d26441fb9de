import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import type { Task } from '../../src/tasks/task.types.js';
import { startAnthropicServer } from '../fakes/anthropic-server.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * Issue 20, over real HTTP to the scripted LLM servers: the operator's keys never reach an llm_api_base the agent's
 * author chose, and llm_extra_headers are write-only (sealed at rest, masked in answers, revealed to the LLM call).
 */
describe.each(TEST_DBS)('LLM endpoint secrets (%s)', (kind) => {
  const OPERATOR_OPENAI = 'sk-operator-openai-0123456789';
  const OPERATOR_ANTHROPIC = 'sk-ant-operator-0123456789';
  let t: TasksApp;
  let openai: ScriptedLlmServer;
  let anthropic: ScriptedLlmServer;
  beforeAll(async () => {
    [t, openai, anthropic] = await Promise.all([
      createTasksApp(kind, { env: { OPENAI_API_KEY: OPERATOR_OPENAI, ANTHROPIC_API_KEY: OPERATOR_ANTHROPIC } }),
      startOpenAIServer(),
      startAnthropicServer(),
    ]);
    openai.handle(() => ({ text: 'ok' }));
    anthropic.handle(() => ({ text: 'ok' }));
  });
  afterAll(async () => {
    // Whatever a test did, the operator's keys reached neither server.
    for (const r of [...(openai?.requests ?? []), ...(anthropic?.requests ?? [])]) expect(JSON.stringify(r.headers)).not.toMatch(/operator/);
    await Promise.all([t?.close(), openai?.close(), anthropic?.close()]);
  });
  const seen = { openai: 0, anthropic: 0 };
  beforeEach(() => {
    seen.openai = openai.requests.length;
    seen.anthropic = anthropic.requests.length;
  });
  const since = (server: ScriptedLlmServer, name: 'openai' | 'anthropic') => server.requests.slice(seen[name]);

  const invoke = async (agentId: string) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'hello' } });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as Task;
  };
  const fields = (server: ScriptedLlmServer, provider: 'openai' | 'anthropic', extra: Record<string, unknown> = {}) => ({
    model_provider: provider,
    model_name: provider === 'openai' ? 'gpt-test' : 'claude-test',
    llm_api_base: server.baseUrl,
    should_stage_before_publish: false,
    ...extra,
  });

  it('does not send the server key to a caller-chosen llm_api_base: the task fails naming the credential to set', async () => {
    for (const [server, provider, envName] of [
      [openai, 'openai', 'OPENAI_API_KEY'],
      [anthropic, 'anthropic', 'ANTHROPIC_API_KEY'],
    ] as const) {
      const task = await invoke(await t.createAgent(fields(server, provider)));
      expect(task.status, provider).toBe('error');
      expect(task.result).toContain(`"${provider}"`);
      expect(task.result).toContain("is not the provider's own endpoint");
      expect(task.result).toContain(envName);
      expect(task.result).toContain('llm_credentials');
      expect(task.result).not.toMatch(/operator/);
      expect(since(server, provider)).toHaveLength(0);
    }
  });

  it("runs with the agent's own llm_credentials, which are what the endpoint receives", async () => {
    const own = { llm_credentials: { name: 'k', value: 'sk-own-openai' } };
    expect((await invoke(await t.createAgent(fields(openai, 'openai', own)))).status).toBe('completed');
    expect(since(openai, 'openai').map((r) => r.headers.authorization)).toEqual(['Bearer sk-own-openai']);
    const ownAnthropic = { llm_credentials: { name: 'k', value: 'sk-own-anthropic' } };
    expect((await invoke(await t.createAgent(fields(anthropic, 'anthropic', ownAnthropic)))).status).toBe('completed');
    const [req] = since(anthropic, 'anthropic');
    expect(req.headers['x-api-key']).toBe('sk-own-anthropic');
    expect(req.headers.authorization).toBeUndefined();
  });

  it('keeps llm_extra_headers write-only: masked in every answer, sealed in every row, sent to the LLM in clear', async () => {
    const gatewayKey = 'gw-key-' + 'z'.repeat(24);
    const team = 'team-value-' + 'y'.repeat(16);
    const headers = { 'X-Gateway-Key': gatewayKey, 'X-Team': team };
    const masked = { 'X-Gateway-Key': '********', 'X-Team': '********' };
    const created = await t.req('POST', '/v1/agents', { name: `hdr-${Date.now()}`, ...fields(openai, 'openai', { llm_credentials: { name: 'k', value: 'sk-own' }, llm_extra_headers: headers }) });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    expect(created.json().llm_extra_headers).toEqual(masked);
    // Sending the masked map back keeps the stored values; the answers of PATCH and deploy are masked too.
    const patched = await t.req('PATCH', `/v1/agents/${id}`, { llm_extra_headers: masked, should_stage_before_publish: true });
    expect(patched.statusCode, patched.body).toBe(200);
    const deployed = await t.req('PUT', `/v1/agents/${id}`);
    expect(deployed.statusCode, deployed.body).toBe(200);
    const answers = [created, patched, deployed];
    const versions = ((await t.req('GET', `/v1/agents/${id}/versions`)).json().items as { version: number }[]).map((v) => v.version);
    expect(versions.length).toBeGreaterThanOrEqual(2);
    const urls = [`/v1/agents/${id}`, '/v1/agents/full?per_page=50', '/v1/agents', `/v1/agents/${id}/versions`, ...versions.map((v) => `/v1/agents/${id}/versions/${v}`)];
    for (const url of urls) {
      const r = await t.req('GET', url);
      expect(r.statusCode, url).toBe(200);
      answers.push(r);
    }
    for (const r of answers) {
      expect(r.body).not.toContain(gatewayKey);
      expect(r.body).not.toContain(team);
    }
    expect(deployed.json().llm_extra_headers).toEqual(masked);

    const rows = await rawRows(id);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const text of rows) {
      expect(text).not.toContain(gatewayKey);
      expect(text).not.toContain(team);
      expectSealed(text);
    }

    const task = await invoke(id);
    expect(task.status, task.result ?? '').toBe('completed');
    const [req] = since(openai, 'openai');
    expect(req.headers['x-gateway-key']).toBe(gatewayKey);
    expect(req.headers['x-team']).toBe(team);
  });

  it('seals llm_extra_headers of rows stored in clear before the migration (published, draft and versions)', async () => {
    const id = await t.createAgent(fields(openai, 'openai', { llm_credentials: { name: 'k', value: 'sk-own' } }));
    const clear = { 'X-Legacy': 'legacy-' + 'x'.repeat(20), Authorization: 'Bearer legacy-auth-' + 'w'.repeat(12) };
    // A row as written before issue 20: the header values in clear.
    const db = t.c.db.kysely;
    const withClear = (text: string) => JSON.stringify({ ...JSON.parse(text), llm_extra_headers: clear });
    const row = await db.selectFrom('agents').select(['config']).where('id', '=', id).executeTakeFirstOrThrow();
    await db.updateTable('agents').set({ config: withClear(row.config), draft: withClear(row.config) }).where('id', '=', id).execute();
    for (const v of await db.selectFrom('agent_versions').select(['version', 'config']).where('agent_id', '=', id).execute()) {
      await db.updateTable('agent_versions').set({ config: withClear(v.config) }).where('agent_id', '=', id).where('version', '=', v.version).execute();
    }
    expect((await rawRows(id)).join('\n')).toContain(clear['X-Legacy']);

    // Run the migration again, as a database from before it would.
    await forgetMigration();
    expect(await migrate(t.c.db, { secretBox: t.c.secretBox })).toEqual(['0012_seal_llm_extra_headers']);

    const rows = await rawRows(id);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const text of rows) {
      expect(text).not.toContain(clear['X-Legacy']);
      expect(text).not.toContain(clear.Authorization);
      expectSealed(text);
    }
    const got = await eventually(async () => (await t.req('GET', `/v1/agents/${id}`)).json(), (a) => a.llm_extra_headers?.['X-Legacy'] === '********');
    expect(got.llm_extra_headers).toEqual({ 'X-Legacy': '********', Authorization: '********' });
    const task = await invoke(id);
    expect(task.status, task.result ?? '').toBe('completed');
    expect(since(openai, 'openai')[0].headers['x-legacy']).toBe(clear['X-Legacy']);

    // Idempotent: a second pass over sealed rows changes nothing.
    await forgetMigration();
    await migrate(t.c.db, { secretBox: t.c.secretBox });
    expect(await rawRows(id)).toEqual(rows);
  });

  async function forgetMigration(): Promise<void> {
    await sql`delete from agentry_migrations where name = ${'0012_seal_llm_extra_headers'}`.execute(t.c.db.kysely);
  }

  /** Every stored configuration text of the agent: published, draft, versions. */
  async function rawRows(id: string): Promise<string[]> {
    const db = t.c.db.kysely;
    const agent = await db.selectFrom('agents').select(['config', 'draft']).where('id', '=', id).executeTakeFirstOrThrow();
    const versions = await db.selectFrom('agent_versions').select(['config']).where('agent_id', '=', id).execute();
    return [agent.config, ...(agent.draft ? [agent.draft] : []), ...versions.map((v) => v.config)];
  }

  function expectSealed(text: string): void {
    const headers = JSON.parse(text).llm_extra_headers as Record<string, unknown>;
    for (const v of Object.values(headers)) expect(v).toEqual({ $sealed: expect.stringMatching(/^v1:/) });
  }
});

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 3000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}
