import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/** Spec 2.2: `regular` agents have no orchestration: no sub-agent or workflow tools, on write and at run time. */
describe.each(TEST_DBS)('regular agents have no orchestration tools (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let helper: string;
  beforeAll(async () => {
    [t, llm] = await Promise.all([createTasksApp(kind), startOpenAIServer()]);
    helper = await t.createAgent(openaiAgentFields('http://127.0.0.1:9/v1'));
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close()]);
  });
  beforeEach(() => {
    llm.requests.length = 0;
  });

  const count = async () => (await t.req('GET', '/v1/agents')).json().total as number;
  const issue = (r: { statusCode: number; json(): any }) => {
    expect(r.statusCode).toBe(422);
    return r.json().detail[0] as { loc: unknown[]; msg: string; type: string };
  };

  it('create: agent and workflow entries, and agent graph items, are refused with the field named; nothing is created', async () => {
    const before = await count();
    const a = issue(await t.req('POST', '/v1/agents', { name: `r1 ${kind}`, type: 'regular', tools: [{ type: 'skill', skill_name: 'draft-email' }, { type: 'agent', agent_id: helper }] }));
    expect(a).toMatchObject({ loc: ['body', 'tools', 1, 'type'], type: 'value_error' });
    expect(a.msg).toContain("type 'regular' agents have no orchestration");
    expect(issue(await t.req('POST', '/v1/agents', { name: `r2 ${kind}`, type: 'regular', tools: [{ type: 'workflow', workflow_id: 'wf-1' }] })).loc).toEqual(['body', 'tools', 0, 'type']);
    expect(issue(await t.req('POST', '/v1/agents', { name: `r3 ${kind}`, type: 'regular', graph: [{ item_id: helper, type: 'agent', targets: [] }] })).loc).toEqual(['body', 'graph', 0, 'type']);
    expect(await count()).toBe(before);
    // A manager may have them.
    expect((await t.req('POST', '/v1/agents', { name: `m1 ${kind}`, type: 'manager', tools: [{ type: 'agent', agent_id: helper }] })).statusCode).toBe(201);
  });

  it('PATCH and attach: refused on a regular agent; turning a manager with sub-agents into regular is refused on type', async () => {
    const regular = await t.createAgent({ type: 'regular', should_stage_before_publish: false });
    expect(issue(await t.req('PATCH', `/v1/agents/${regular}`, { tools: [{ type: 'agent', agent_id: helper }] })).loc).toEqual(['body', 'tools', 0, 'type']);
    expect(issue(await t.req('POST', `/v1/agents/${regular}/tools`, { type: 'agent', agent_id: helper })).loc).toEqual(['body', 'type']);
    expect((await t.req('GET', `/v1/agents/${regular}`)).json().graph).toEqual([]);

    const manager = await t.createAgent({ tools: [{ type: 'agent', agent_id: helper }], should_stage_before_publish: false });
    const r = issue(await t.req('PATCH', `/v1/agents/${manager}`, { type: 'regular' }));
    expect(r.loc).toEqual(['body', 'type']);
    expect(r.msg).toContain('remove the agent');
    expect((await t.req('GET', `/v1/agents/${manager}`)).json().type).toBe('manager');
  });

  it('a stored regular agent that still has a sub-agent item is not offered it at run time', async () => {
    const agent = await t.createAgent(openaiAgentFields(llm.baseUrl, { type: 'regular', tools: [{ type: 'skill', skill_name: 'draft-email' }] }));
    // A row written before the rule existed: the sub-agent item is put into the stored configuration directly.
    const row = await t.c.db.kysely.selectFrom('agents').select(['config']).where('id', '=', agent).executeTakeFirstOrThrow();
    const config = JSON.parse(row.config);
    config.graph.push({ id: 'sub', item_id: helper, name: 'helper', type: 'agent', sub_type: null, targets: [], settings: null, is_first: false });
    await t.c.db.kysely.updateTable('agents').set({ config: JSON.stringify(config) }).where('id', '=', agent).execute();
    expect((await t.req('GET', `/v1/agents/${agent}`)).json().graph.map((g: { type: string }) => g.type)).toContain('agent');

    llm.reply({ text: 'No delegation here.' });
    const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text: 'hi' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'No delegation here.' });
    expect(llm.requests[0].tools).toContain('load_skill');
    expect(llm.requests[0].tools.some((n: string) => n.startsWith('agent_'))).toBe(false);
  });
});
