import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CALL_DEPTH } from '../../src/tasks/call-depth.js';
import type { Task } from '../../src/tasks/task.types.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/**
 * Two Agentry instances over real HTTP: `remote` serves its discoverable agents over A2A (its API listens on a
 * port), `local` has an `a2a` agent pointing at one of them. Plus raw JSON-RPC calls as a v0.3 client makes them.
 */
describe.each(TEST_DBS)('Agentry agents over A2A (%s)', (kind) => {
  let local: TasksApp;
  let remote: TasksApp;
  let llm: ScriptedLlmServer;
  let remoteUrl: string;
  let remoteAgent: string;
  beforeAll(async () => {
    [local, remote, llm] = await Promise.all([createTasksApp(kind), createTasksApp(kind), startOpenAIServer()]);
    remoteUrl = await remote.app.listen({ port: 0, host: '127.0.0.1' });
    remote.c.urls.api = remoteUrl;
    llm.handle((r) => ({ text: `remote says: ${r.lastUserText}` }));
    remoteAgent = await remote.createAgent(openaiAgentFields(llm.baseUrl, { description: 'Says things back' }));
  });
  afterAll(async () => {
    await Promise.all([local?.close(), remote?.close(), llm?.close()]);
  });

  const endpoint = () => `${remoteUrl}/v1/a2a/agents/${remoteAgent}`;
  const rpc = async (method: string, params: unknown, key = remote.keyA, url = endpoint()) => {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }) });
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };
  const v03Message = (text: string, extra: Record<string, unknown> = {}) => ({ message: { kind: 'message', role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }], ...extra } });

  it('serves an agent card per discoverable agent: name, description, skills, both protocol versions', async () => {
    const v1 = await fetch(`${endpoint()}/.well-known/agent-card.json`, { headers: { 'x-api-key': remote.keyA, 'a2a-version': '1.0' } });
    expect(v1.status).toBe(200);
    const card = await v1.json();
    expect(card).toMatchObject({ description: 'Says things back', capabilities: { streaming: true } });
    expect(card.skills[0]).toMatchObject({ id: 'run', description: 'Says things back' });
    expect(card.supportedInterfaces.map((i: { protocolVersion: string; url: string }) => [i.protocolVersion, i.url])).toEqual([
      ['1.0', endpoint()],
      ['0.3', endpoint()],
    ]);
    // A v0.3 client (no A2A-Version header) gets the v0.3 shape.
    const legacy = await (await fetch(`${endpoint()}/.well-known/agent-card.json`, { headers: { 'x-api-key': remote.keyA } })).json();
    expect(legacy).toMatchObject({ url: endpoint(), preferredTransport: 'JSONRPC', name: card.name });
  });

  it("the card's skills: the agent itself, then each graph item once (named, typed), then its skill entries", async () => {
    const fnId = (await remote.req('POST', '/v1/custom_functions', { name: 'lookup', code: 'async function run() { return 1; }' })).json().id;
    const agent = await remote.createAgent(
      openaiAgentFields(llm.baseUrl, {
        name: 'carded',
        description: '',
        tools: [{ type: 'custom_function', custom_function_id: fnId }],
        graph: [{ item_id: 'summarize-document', type: 'skill', targets: [] }],
        skills: [{ name: 'draft-email', description: 'Drafts replies' }],
      }),
    );
    const card = await (await fetch(`${remoteUrl}/v1/a2a/agents/${agent}/.well-known/agent-card.json`, { headers: { 'x-api-key': remote.keyA, 'a2a-version': '1.0' } })).json();
    // An empty description reads as the name.
    expect(card).toMatchObject({ name: 'carded', description: 'carded' });
    expect(card.skills.map((s: { id: string; name: string; description: string; tags: string[] }) => [s.id, s.name, s.description, s.tags])).toEqual([
      ['run', 'carded', 'carded', ['manager']],
      ['summarize-document', 'summarize-document', 'A skill the agent can use', ['skill']],
      [fnId, 'lookup', 'A tool/custom_function the agent can use', ['tool/custom_function']],
      ['draft-email', 'draft-email', 'Drafts replies', ['skill']],
    ]);
  });

  it("an a2a agent of one instance runs another instance's agent; the remote run is a task with source a2a", async () => {
    const id = await local.createAgent({ type: 'a2a', connectivity_details: { url: endpoint(), auth_type: 'api_key', api_key: remote.keyA } });
    const r = await local.req('POST', `/v1/agents/${id}/invoke`, { input: { text: 'ping' } });
    const task = r.json() as Task;
    expect(task).toMatchObject({ status: 'completed', result: 'remote says: ping' });
    const events = (await local.req('GET', `/v1/tasks/${task.id}/events`)).json() as { type: string; data: any }[];
    const step = events.filter((e) => e.type === 'tool_call_result' && e.data.remote).at(-1)!.data;
    expect(step).toMatchObject({ tool_name: 'a2a message/stream', status: 'completed' });
    // The remote model's streamed text arrives as chunks, once (the final whole artifact replaces, it does not repeat).
    expect(events.filter((e) => e.type === 'chunk').map((e) => e.data.text).join('')).toBe('remote says: ping');
    const remoteTask = (await remote.req('GET', `/v1/tasks/${step.remote_task_id}`)).json() as Task;
    expect(remoteTask).toMatchObject({ source: 'a2a', agent_id: remoteAgent, status: 'completed', result: 'remote says: ping' });
    expect((await remote.req('GET', `/v1/tasks?source=a2a`)).json().total).toBeGreaterThan(0);
  });

  it('an a2a agent pointing at itself stops after MAX_CALL_DEPTH nested calls instead of filling every worker slot', async () => {
    const loop = await remote.createAgent({ type: 'a2a', connectivity_details: { url: 'http://127.0.0.1:9/placeholder', auth_type: 'api_key', api_key: remote.keyA } });
    const patched = await remote.req('PATCH', `/v1/agents/${loop}?deploy=true`, { connectivity_details: { url: `${remoteUrl}/v1/a2a/agents/${loop}`, auth_type: 'api_key', api_key: remote.keyA } });
    expect(patched.statusCode, patched.body).toBe(200);
    const r = await remote.req('POST', `/v1/agents/${loop}/invoke`, { input: { text: 'round and round' } });
    const task = r.json() as Task;
    expect(task.status).not.toBe('completed');
    expect(task.call_depth).toBe(0);
    // Depths 0..MAX ran; the call that would have been one deeper was refused, and every level ended.
    const all = (await remote.req('GET', `/v1/tasks?agent_id=${loop}&per_page=50`)).json().items as Task[];
    expect(all.map((t) => t.call_depth).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(all.every((t) => ['error', 'failed'].includes(t.status))).toBe(true);
    const deepest = all.find((t) => t.call_depth === MAX_CALL_DEPTH)!;
    expect(deepest.result).toMatch(/nest deeper than 5/);
  }, 60_000);

  it('a caller that declares a call depth past the bound is refused with 422 on invoke, and nothing is created', async () => {
    const before = (await remote.req('GET', `/v1/tasks?agent_id=${remoteAgent}`)).json().total;
    const r = await remote.req('POST', `/v1/agents/${remoteAgent}/invoke`, { input: { text: 'deep' } }, { 'x-agentry-call-depth': String(MAX_CALL_DEPTH + 1) });
    expect(r.statusCode).toBe(422);
    expect(r.json().detail[0]).toMatchObject({ loc: ['header', 'x-agentry-call-depth'] });
    expect((await remote.req('GET', `/v1/tasks?agent_id=${remoteAgent}`)).json().total).toBe(before);
  });

  it('answers the SDK v1.0 client: SendMessage without blocking, then GetTask until completed', async () => {
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-api-key', remote.keyA);
      return fetch(input, { ...init, headers });
    };
    const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(`${endpoint()}/.well-known/agent-card.json`, '');
    const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })], clientConfig: { polling: true } }).createFromAgentCard(card);
    expect(client.protocolVersion).toBe('1.0');
    const sent = await client.sendMessage({
      tenant: '',
      message: { messageId: 'm-v1', contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text', value: 'v1 hello' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    });
    expect('status' in sent).toBe(true);
    let task = sent as Awaited<ReturnType<typeof client.getTask>>;
    for (let i = 0; i < 200 && task.status?.state !== TaskState.TASK_STATE_COMPLETED; i++) {
      await new Promise((r) => setTimeout(r, 50));
      task = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    }
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'remote says: v1 hello' });
  });

  it('answers message/send, tasks/get and tasks/cancel as a v0.3 client calls them', async () => {
    const sent = await rpc('message/send', v03Message('hello v0.3'));
    expect(sent.status).toBe(200);
    expect(sent.body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(sent.body.result.artifacts[0].parts[0]).toMatchObject({ kind: 'text', text: 'remote says: hello v0.3' });
    const got = await rpc('tasks/get', { id: sent.body.result.id });
    expect(got.body.result).toMatchObject({ id: sent.body.result.id, status: { state: 'completed' } });
    const cancel = await rpc('tasks/cancel', { id: sent.body.result.id });
    expect(cancel.body.error).toMatchObject({ code: -32002 });
    const missing = await rpc('tasks/get', { id: 'no-such-task' });
    expect(missing.body.error).toMatchObject({ code: -32001 });
    const empty = await rpc('message/send', v03Message(''));
    expect(empty.body.error.message).toMatch(/no text/);
  });

  it('a non-blocking send returns the submitted task; tasks/cancel stops it', async () => {
    llm.reply({ text: 'too late', delayMs: 10_000 });
    const sent = await rpc('message/send', { ...v03Message('take your time'), configuration: { blocking: false } });
    const id = sent.body.result.id as string;
    expect(['submitted', 'working']).toContain(sent.body.result.status.state);
    await remote.waitTask(id, (t) => t.status === 'executing');
    const cancel = await rpc('tasks/cancel', { id });
    expect(cancel.body.result).toMatchObject({ id, status: { state: 'canceled' } });
    expect((await remote.req('GET', `/v1/tasks/${id}`)).json().status).toBe('stopped');
  });

  it('stopping the local task cancels the remote Agentry task', async () => {
    llm.reply({ text: 'never', delayMs: 10_000 });
    const id = await local.createAgent({ type: 'a2a', connectivity_details: { url: endpoint(), auth_type: 'api_key', api_key: remote.keyA } });
    const before = (await remote.req('GET', `/v1/agents/${remoteAgent}/tasks?status=executing`)).json().total;
    const started = (await local.req('POST', `/v1/agents/${id}/invoke/async`, { input: { text: 'long one' } })).json() as Task;
    let remoteTask: Task | undefined;
    for (let i = 0; i < 200 && !remoteTask; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const list = (await remote.req('GET', `/v1/agents/${remoteAgent}/tasks?status=executing`)).json();
      if (list.total > before) remoteTask = list.items[0];
    }
    expect(remoteTask).toBeDefined();
    // A cancel needs the remote task's id, which the local run learns from the stream's first event: a stop in the
    // instant before it cannot name the remote task (docs/external-agents.md). Give the event that instant.
    await new Promise((r) => setTimeout(r, 300));
    await local.req('POST', `/v1/tasks/${started.id}/stop`);
    const stopped = await remote.waitTask(remoteTask!.id, (t) => t.status !== 'executing', 10_000);
    expect(stopped.status).toBe('stopped');
  });

  it('refuses missing or wrong keys, other organizations and agents that are not discoverable', async () => {
    const noKey = await fetch(endpoint(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect([noKey.status, await noKey.json()]).toEqual([401, { detail: 'API key not specified' }]);
    const wrong = await rpc('message/send', v03Message('x'), 'agk_' + 'x'.repeat(43));
    expect([wrong.status, wrong.body]).toEqual([403, { detail: 'Invalid API key' }]);
    const other = await rpc('message/send', v03Message('x'), remote.keyB);
    expect([other.status, other.body]).toEqual([404, { detail: 'Agent not found' }]);
    const hidden = await remote.createAgent(openaiAgentFields(llm.baseUrl, { discoverable: false }));
    const r = await rpc('message/send', v03Message('x'), remote.keyA, `${remoteUrl}/v1/a2a/agents/${hidden}`);
    expect([r.status, r.body]).toEqual([404, { detail: 'Agent not found' }]);
    const card = await fetch(`${remoteUrl}/v1/a2a/agents/${hidden}/.well-known/agent-card.json`, { headers: { 'x-api-key': remote.keyA } });
    expect(card.status).toBe(404);
    const closed = await remote.createAgent(openaiAgentFields(llm.baseUrl, { developer_access: false }));
    const refused = await rpc('message/send', v03Message('x'), remote.keyA, `${remoteUrl}/v1/a2a/agents/${closed}`);
    expect([refused.status, refused.body]).toEqual([403, { detail: 'Developer access is disabled for this agent' }]);
    // And an a2a agent given a wrong key says so in its task.
    const id = await local.createAgent({ type: 'a2a', connectivity_details: { url: endpoint(), auth_type: 'api_key', api_key: 'agk_wrong' } });
    const task = (await local.req('POST', `/v1/agents/${id}/invoke`, { input: { text: 'x' } })).json() as Task;
    expect(task.status).toBe('error');
    expect(task.result).toMatch(/refused the credentials \(HTTP 403\)/);
  });
});
