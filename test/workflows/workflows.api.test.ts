import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/** The workflows resource: CRUD, validation of the graph and of what steps name, versions, the orchestration agent. */
describe.each(TEST_DBS)('workflows API (%s)', (kind) => {
  let t: TasksApp;
  let agentId: string;
  beforeAll(async () => {
    t = await createTasksApp(kind, { worker: false });
    agentId = await t.createAgent();
  });
  afterAll(async () => {
    await t?.close();
  });

  const twoSteps = (name: string) => ({
    name,
    steps: [
      { id: 'ask', type: 'agent', agent_id: agentId, input: 'Summarise: {{input.text}}', next: 'check' },
      { id: 'check', type: 'condition', value: '{{steps.ask.output}}', cases: [{ operator: 'contains', value: 'yes', next: 'done' }] },
      { id: 'done', type: 'approval', message: 'ok? {{steps.ask.output}}' },
    ],
  });

  const counts = async () => ({
    workflows: (await t.req('GET', '/v1/workflows')).json().total as number,
    agents: (await t.req('GET', '/v1/agents')).json().total as number,
  });

  it('creates a workflow as version 1 with its orchestration agent; lists, gets, and hides it from other organizations', async () => {
    const r = await t.req('POST', '/v1/workflows', twoSteps(`wf-create-${kind}`));
    expect(r.statusCode, r.body).toBe(201);
    const wf = r.json();
    expect(wf).toMatchObject({ name: `wf-create-${kind}`, version: 1, has_pending_changes: false, start: 'ask', description: '' });
    expect(wf.steps[0]).toMatchObject({ id: 'ask', type: 'agent', agent_id: agentId, next: 'check' });
    const agent = (await t.req('GET', `/v1/agents/${wf.agent_id}`)).json();
    expect(agent).toMatchObject({ type: 'orchestration', name: `wf-create-${kind}`, orchestration_nodes: [{ type: 'workflow', workflow_id: wf.id, version: 1 }] });
    expect((await t.req('GET', `/v1/workflows/${wf.id}`)).json().id).toBe(wf.id);
    const list = (await t.req('GET', '/v1/workflows?per_page=1')).json();
    expect(list).toMatchObject({ page: 1, per_page: 1 });
    expect(list.items).toHaveLength(1);
    const other = await t.app.inject({ method: 'GET', url: `/v1/workflows/${wf.id}`, headers: { 'x-api-key': t.keyB } });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ detail: 'Workflow not found' });
    const otherList = await t.app.inject({ method: 'GET', url: '/v1/workflows', headers: { 'x-api-key': t.keyB } });
    expect(otherList.json().total).toBe(0);
  });

  it('refuses orchestration agents on POST /v1/agents still', async () => {
    const r = await t.req('POST', '/v1/agents', { name: `orch-${kind}`, type: 'orchestration' });
    expect(r.statusCode).toBe(422);
  });

  const refusals: [string, (b: ReturnType<typeof twoSteps>) => unknown, (string | number)[], RegExp][] = [
    ['an unknown next step', (b) => ((b.steps[0] as Record<string, unknown>).next = 'nowhere'), ['body', 'steps', 0, 'next'], /unknown step 'nowhere'/],
    ['an unknown case target', (b) => ((b.steps[1] as { cases: { next: string }[] }).cases[0].next = 'gone'), ['body', 'steps', 1, 'cases', 0, 'next'], /unknown step 'gone'/],
    ['a cycle', (b) => ((b.steps[2] as Record<string, unknown>).next = 'ask'), ['body', 'steps', 2, 'next'], /leads back to step 'ask'/],
    ['a reference to an unknown step', (b) => ((b.steps[0] as Record<string, unknown>).input = { text: '{{steps.ghost.output}}' }), ['body', 'steps', 0, 'input', 'text'], /unknown step 'ghost'/],
    ['a reference to a later step', (b) => ((b.steps[0] as Record<string, unknown>).input = 'x {{steps.done.output}}'), ['body', 'steps', 0, 'input'], /does not run before/],
    ['a malformed reference', (b) => ((b.steps[2] as Record<string, unknown>).message = '{{ env.SECRET }}'), ['body', 'steps', 2, 'message'], /not a reference/],
    ['an unknown start', (b) => ((b as Record<string, unknown>).start = 'nope'), ['body', 'start'], /unknown step/],
    ['a duplicate step id', (b) => (b.steps[2].id = 'ask'), ['body', 'steps', 2, 'id'], /used twice/],
    ['an agent of nobody', (b) => ((b.steps[0] as Record<string, unknown>).agent_id = 'no-such-agent'), ['body', 'steps', 0, 'agent_id'], /agent 'no-such-agent' not found/],
    ['an unreachable step', (b) => (b.steps as unknown[]).push({ id: 'lost', type: 'approval' }), ['body', 'steps', 3, 'id'], /never reached/],
    ['a step timeout above the bound', (b) => ((b.steps[0] as Record<string, unknown>).timeout_seconds = 3601), ['body', 'steps', 0, 'timeout_seconds'], /./],
  ];
  it.each(refusals)('refuses %s with a precise loc and creates nothing', async (_label, mutate, loc, msg) => {
    const before = await counts();
    const body = twoSteps(`wf-bad-${kind}-${Math.random()}`);
    mutate(body);
    const r = await t.req('POST', '/v1/workflows', body);
    expect(r.statusCode, r.body).toBe(422);
    const issue = r.json().detail[0];
    expect(issue.loc).toEqual(loc);
    expect(issue.msg).toMatch(msg);
    expect(await counts()).toEqual(before);
  });

  it('bounds steps and parallel width', async () => {
    const many = { name: `wf-many-${kind}`, steps: Array.from({ length: 51 }, (_, i) => ({ id: `s${i}`, type: 'approval', next: i < 50 ? `s${i + 1}` : null })) };
    const r1 = await t.req('POST', '/v1/workflows', many);
    expect(r1.statusCode).toBe(422);
    expect(r1.json().detail[0].loc).toEqual(['body', 'steps']);
    // Two parallels of 5 nested in one of 2 branches: 5 + 5 ... the outer runs 10 at once.
    const leaf = (id: string) => ({ id, type: 'approval' });
    const inner = (id: string, p: string) => ({ id, type: 'parallel', branches: [1, 2, 3, 4, 5].map((i) => `${p}${i}`) });
    const wide = {
      name: `wf-wide-${kind}`,
      steps: [{ id: 'outer', type: 'parallel', branches: ['a', 'b'] }, inner('a', 'x'), inner('b', 'y'), ...[1, 2, 3, 4, 5].flatMap((i) => [leaf(`x${i}`), leaf(`y${i}`)])],
    };
    const r2 = await t.req('POST', '/v1/workflows', wide);
    expect(r2.statusCode, r2.body).toBe(422);
    expect(r2.json().detail[0]).toMatchObject({ loc: ['body', 'steps', 0, 'branches'] });
    expect(r2.json().detail[0].msg).toMatch(/up to 10 steps at once/);
    // Branches that share a step would run it twice.
    const shared = { name: `wf-shared-${kind}`, steps: [{ id: 'p', type: 'parallel', branches: ['a', 'b'] }, { ...leaf('a'), next: 'c' }, { ...leaf('b'), next: 'c' }, leaf('c')] };
    const r3 = await t.req('POST', '/v1/workflows', shared);
    expect(r3.statusCode).toBe(422);
    expect(r3.json().detail[0]).toMatchObject({ loc: ['body', 'steps', 0, 'branches', 1] });
  });

  it('takes timeout_seconds only on steps that wait (agent, action, custom function, approval)', async () => {
    for (const step of [
      { id: 'c', type: 'condition', value: 'x', cases: [{ value: 'x', next: 'a' }], timeout_seconds: 5 },
      { id: 'c', type: 'parallel', branches: ['a'], timeout_seconds: 5 },
    ]) {
      const r = await t.req('POST', '/v1/workflows', { name: `wf-timeout-${step.type}-${kind}`, steps: [step, { id: 'a', type: 'approval', timeout_seconds: 60 }] });
      expect(r.statusCode, r.body).toBe(422);
      expect(r.json().detail).toEqual([expect.objectContaining({ loc: ['body', 'steps', 0, 'timeout_seconds'], type: 'extra_forbidden' })]);
    }
    expect((await t.req('GET', '/v1/workflows')).json().items.filter((w: { name: string }) => w.name.startsWith('wf-timeout-'))).toEqual([]);
  });

  it('stages PATCHes as a draft, deploys them as version 2 and points the agent at it; versions stay readable', async () => {
    const wf = (await t.req('POST', '/v1/workflows', twoSteps(`wf-ver-${kind}`))).json();
    const patched = await t.req('PATCH', `/v1/workflows/${wf.id}`, { description: 'changed' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ version: 1, has_pending_changes: true, description: 'changed' });
    // A PATCH is checked as a whole too.
    const bad = await t.req('PATCH', `/v1/workflows/${wf.id}`, { start: 'nope' });
    expect(bad.statusCode).toBe(422);
    const deployed = await t.req('PUT', `/v1/workflows/${wf.id}`);
    expect(deployed.json()).toMatchObject({ version: 2, has_pending_changes: false, description: 'changed' });
    const agent = (await t.req('GET', `/v1/agents/${wf.agent_id}`)).json();
    expect(agent.orchestration_nodes).toEqual([{ type: 'workflow', workflow_id: wf.id, version: 2 }]);
    const versions = (await t.req('GET', `/v1/workflows/${wf.id}/versions`)).json();
    expect(versions.items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect((await t.req('GET', `/v1/workflows/${wf.id}/versions/1`)).json()).toMatchObject({ version: 1, description: '' });
    expect((await t.req('GET', `/v1/workflows/${wf.id}/versions/9`)).statusCode).toBe(404);
    // The agent deleted: POST .../agent makes a new one at the current version.
    await t.req('DELETE', `/v1/agents/${wf.agent_id}`);
    const again = await t.req('POST', `/v1/workflows/${wf.id}/agent`);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().agent_id).not.toBe(wf.agent_id);
    expect((await t.req('GET', `/v1/agents/${again.json().agent_id}`)).json()).toMatchObject({ type: 'orchestration', orchestration_nodes: [{ workflow_id: wf.id, version: 2 }] });
    const del = await t.req('DELETE', `/v1/workflows/${wf.id}`);
    expect(del.json()).toEqual({ id: wf.id, deleted: true });
    expect((await t.req('GET', `/v1/workflows/${wf.id}`)).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/agents/${again.json().agent_id}`)).statusCode).toBe(404);
  });

  it("refuses another member's personal agent as a step, as if it did not exist", async () => {
    const member = await t.c.orgs.createApiKey('org-a', 'member', 'member');
    const as = (key: string, method: 'POST' | 'GET', url: string, body?: unknown) =>
      t.app.inject({ method, url, payload: body === undefined ? undefined : JSON.stringify(body), headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } });
    const mine = await as(member.key, 'POST', '/v1/agents', { name: `personal-${kind}`, access_scope: 'personal' });
    expect(mine.statusCode).toBe(201);
    const flow = { name: `wf-personal-${kind}`, steps: [{ id: 'ask', type: 'agent', agent_id: mine.json().id }] };
    const other = await as(t.keyA, 'POST', '/v1/workflows', flow);
    // keyA is an admin: admins see personal agents. A second member does not.
    expect(other.statusCode).toBe(201);
    const stranger = await t.c.orgs.createApiKey('org-a', 'stranger', 'member');
    const refused = await as(stranger.key, 'POST', '/v1/workflows', { ...flow, name: `wf-personal2-${kind}` });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().detail[0]).toMatchObject({ loc: ['body', 'steps', 0, 'agent_id'] });
    expect((await as(member.key, 'POST', '/v1/workflows', { ...flow, name: `wf-personal3-${kind}` })).statusCode).toBe(201);
  });

  it('refuses a duplicate name (of a workflow, or of an agent its own agent would take) without creating anything', async () => {
    await t.req('POST', '/v1/workflows', twoSteps(`wf-dup-${kind}`));
    const before = await counts();
    const r = await t.req('POST', '/v1/workflows', twoSteps(`wf-dup-${kind}`));
    expect(r.statusCode).toBe(422);
    expect(r.json().detail[0].loc).toEqual(['body', 'name']);
    expect(await counts()).toEqual(before);
    await t.createAgent({ name: `taken-${kind}` });
    const taken = await counts();
    const clash = await t.req('POST', '/v1/workflows', twoSteps(`taken-${kind}`));
    expect(clash.statusCode).toBe(422);
    expect(clash.json().detail[0]).toMatchObject({ loc: ['body', 'name'], msg: expect.stringContaining('agent with this name') });
    expect(await counts()).toEqual(taken);
  });
});
