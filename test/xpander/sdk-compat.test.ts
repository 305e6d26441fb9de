import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';
import {
  AgentSchema,
  AgentsListItemSchema,
  KnowledgeBaseDocumentItemSchema,
  KnowledgeBaseSchema,
  KnowledgeBaseSearchResultSchema,
  listOf,
  schemaErrors,
  StandaloneToolSchema,
  TaskSchema,
  TasksListItemSchema,
  TaskUpdateEventSchema,
} from './sdk-schemas.js';

/**
 * xpander's Python SDK and TypeScript CLI against Agentry (issue 25): each call below is the request their public
 * source sends (method, path, headers, body), and every answer is validated against the JSON Schemas transcribed
 * from the SDK's Pydantic models (sdk-schemas.ts).
 */

const WEATHER = (serverUrl: string) => ({
  openapi: '3.0.3',
  info: { title: 'Weather', version: '1' },
  servers: [{ url: serverUrl }],
  paths: {
    '/weather/{city}': {
      get: {
        operationId: 'getWeather',
        summary: 'Current weather of a city',
        parameters: [{ name: 'city', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { temp: { type: 'number' } } } } } } },
      },
    },
  },
});

/** The payload of the SDK's `Agent.acreate_task` with its defaults (sub_modules/agent.py), `prompt` filled in. */
function sdkCreateTaskPayload(prompt: string, over: Record<string, unknown> = {}) {
  return {
    id: null,
    input: { text: prompt, files: [], user: null },
    payload_extension: null,
    source: 'sdk',
    worker_id: null,
    output_format: null,
    output_schema: null,
    run_locally: false,
    events_streaming: false,
    additional_context: null,
    instructions_override: null,
    test_run_node_id: null,
    user_oidc_token: null,
    expected_output: null,
    mcp_servers: [],
    triggering_agent_id: null,
    title: null,
    think_mode: 'default',
    disable_attachment_injection: false,
    user_tokens: null,
    return_metrics: false,
    ...over,
  };
}

/** Server-Sent Events as httpx-sse reads them: the `data:` lines of each event. */
function sseData(body: string): unknown[] {
  return body
    .split('\n\n')
    .map((block) => block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'))
    .filter(Boolean)
    .map((d) => JSON.parse(d));
}

describe.each(TEST_DBS)('xpander SDK and CLI compatibility (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let up: UpstreamApi;
  let agentId: string;
  let connectorId: string;
  let weatherOpId: string;
  let orgB: string;
  // The SDK's client: httpx with x-api-key (core/xpander_api_client.py); JSON bodies get their content type.
  const sdk = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', path: string, payload?: unknown, headers: Record<string, string> = {}) => t.req(method, path, payload, headers);
  // The CLI's axios client sends Content-Type: application/json on every call (utils/client.ts).
  const cli = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT', path: string, data?: unknown, key?: string) =>
    t.app.inject({ method, url: path, payload: data === undefined ? undefined : JSON.stringify(data), headers: { 'content-type': 'application/json', 'x-api-key': key ?? t.keyA } });
  const valid = (schema: object, value: unknown) => expect(schemaErrors(schema, value), JSON.stringify(value).slice(0, 2000)).toBe('');

  beforeAll(async () => {
    [t, llm, up] = await Promise.all([createTasksApp(kind), startOpenAIServer(), startUpstreamApi()]);
    orgB = (await t.c.auth.authenticate({ apiKey: t.keyB })).organizationId;
    up.on('GET', '/weather/Paris', (r) => ({ json: { temp: 21.5, key: r.headers['x-api-key'] ?? null } }));
    connectorId = (await t.req('POST', '/v1/connectors', { name: 'weather', openapi: WEATHER(up.url) })).json().id;
    const connectionId = (await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'w', security: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: 'wk' } })).json().id;
    weatherOpId = (await t.req('GET', `/v1/tools/connectors/${connectorId}/operations`)).json()[0].id;
    agentId = await t.createAgent(
      scriptedAgentFields(llm.baseUrl, {
        instructions: { role: ['You report the weather.'], goal: [], general: 'Be brief.' },
        tools: [{ type: 'action', connection_id: connectionId, operation_ids: ['getWeather'] }],
      }),
    );
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close(), up?.close()]);
  });

  it('lists agents as bare arrays: the CLI GET /v1/agents/list, the SDK GET /agents/list', async () => {
    for (const r of [await cli('GET', '/v1/agents/list'), await sdk('GET', '/agents/list')]) {
      expect(r.statusCode, r.body).toBe(200);
      valid(listOf(AgentsListItemSchema), r.json());
      expect(r.json().map((a: { id: string }) => a.id)).toContain(agentId);
      expect(r.json()[0].organization_id).toBe(t.orgA);
    }
    // Organization B sees none of A's agents.
    expect((await cli('GET', '/v1/agents/list', undefined, t.keyB)).json()).toEqual([]);
  });

  it('loads an agent with resolved tool definitions; x-agent-version picks a published version', async () => {
    const r = await sdk('GET', `/agents/${agentId}`);
    expect(r.statusCode, r.body).toBe(200);
    const agent = r.json();
    valid(AgentSchema, agent);
    const published = agent.version as number;
    expect(agent).not.toHaveProperty('environment_id');
    expect(agent.framework).toBe('agno');
    expect(agent.tools).toEqual([
      expect.objectContaining({ id: 'getWeather', name: 'getWeather', method: 'GET', path: '/weather/{city}', connector_id: connectorId, operation_id: weatherOpId, is_local: false }),
    ]);
    expect(agent.tools[0].parameters.properties.path_params.required).toEqual(['city']);
    expect(agent.graph).toEqual([expect.objectContaining({ item_id: 'getWeather', type: 'tool' })]);

    // A staged change is not what invocations run: the SDK keeps getting the published version until deploy.
    expect((await t.req('PATCH', `/v1/agents/${agentId}`, { description: 'draft only' })).statusCode).toBe(200);
    expect((await sdk('GET', `/agents/${agentId}`)).json().description).not.toBe('draft only');
    expect((await t.req('PUT', `/v1/agents/${agentId}`)).statusCode).toBe(200);
    const v2 = (await sdk('GET', `/agents/${agentId}`)).json();
    expect([v2.version, v2.description]).toEqual([published + 1, 'draft only']);
    const v1 = await sdk('GET', `/agents/${agentId}`, undefined, { 'x-agent-version': String(published) });
    valid(AgentSchema, v1.json());
    expect([v1.json().version, v1.json().description]).toEqual([published, '']);

    expect((await sdk('GET', `/agents/${agentId}`, undefined, { 'x-agent-version': '99' })).json()).toEqual({ detail: 'Agent version not found' });
    const bad = await sdk('GET', `/agents/${agentId}`, undefined, { 'x-agent-version': 'latest' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0].loc).toEqual(['header', 'x-agent-version']);
    expect((await sdk('GET', `/agents/${agentId}`, undefined, { 'x-api-key': t.keyB })).json()).toEqual({ detail: 'Agent not found' });
  });

  it('keeps graph items the SDK can parse: MCP settings with the secret masked; skills only on /v1', async () => {
    const skill = (await t.req('POST', '/v1/skills', { name: `tone-${kind}`, description: 'Tone rules', instructions: 'Be kind.' })).json().name as string;
    const id = await t.createAgent({
      tools: [
        { type: 'mcp', url: 'https://mcp.example.com/mcp', name: 'docs', auth_type: 'api_key', api_key: 'mcp-secret' },
        { type: 'skill', skill_name: skill },
      ],
    });
    const agent = (await sdk('GET', `/agents/${id}`)).json();
    valid(AgentSchema, agent);
    expect(agent.graph).toEqual([expect.objectContaining({ type: 'mcp', settings: { mcp_settings: expect.objectContaining({ url: 'https://mcp.example.com/mcp', api_key: '********' }) } })]);
    expect(JSON.stringify(agent)).not.toContain('mcp-secret');
    expect(agent.tools).toEqual([]);
    expect((await t.req('GET', `/v1/agents/${id}`)).json().graph.map((g: { type: string }) => g.type).sort()).toEqual(['mcp', 'skill']);
  });

  it('creates a task as the SDK does, runs it, and serves status, events and history in the SDK types', async () => {
    llm.reply({ toolCalls: [{ name: 'getWeather', arguments: { path_params: { city: 'Paris' } } }] }, { text: 'Sunny, 21.5 degrees.' });
    const created = await sdk('POST', `/agent-execution/${agentId}`, sdkCreateTaskPayload('Weather in Paris?', { input: { text: 'Weather in Paris?', files: [], user: { id: 'u-1', first_name: 'Ada', last_name: null, email: 'ada@example.com', additional_attributes: null, timezone: null } } }));
    expect(created.statusCode, created.body).toBe(200);
    valid(TaskSchema, created.json());
    const version = String((await t.req('GET', `/v1/agents/${agentId}`)).json().version);
    expect(created.json()).toMatchObject({ agent_id: agentId, source: 'sdk', agent_version: version, status: 'pending', input: { text: 'Weather in Paris?', files: [] } });
    const taskId = created.json().id as string;

    await t.waitTask(taskId, (x) => x.status === 'completed');
    const status = await sdk('GET', `/agent-execution/${taskId}/status`);
    valid(TaskSchema, status.json());
    expect(status.json()).toMatchObject({ status: 'completed', result: 'Sunny, 21.5 degrees.', source: 'sdk' });
    expect(up.received('GET', '/weather/Paris')[0].headers['x-api-key']).toBe('wk');

    // Task.aevents(): httpx-sse's GET {base}/{organization_id}/agent-execution/{task_id}/events with x-api-key.
    const sse = { 'x-api-key': t.keyA, accept: 'text/event-stream', 'cache-control': 'no-store' };
    const stream = await t.app.inject({ method: 'GET', url: `/${t.orgA}/agent-execution/${taskId}/events`, headers: sse });
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = sseData(stream.body) as { type: string; data: Record<string, unknown> }[];
    for (const e of events) valid(TaskUpdateEventSchema, e);
    const types = events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['task_created', 'tool_call_request', 'tool_call_result', 'task_finished']));
    expect(types).not.toContain('llm_call');
    expect(events.find((e) => e.type === 'tool_call_result')!.data).toMatchObject({ operation_id: 'getWeather', tool_name: 'getWeather', is_error: false });
    expect((await t.app.inject({ method: 'GET', url: `/${orgB}/agent-execution/${taskId}/events`, headers: sse })).json()).toEqual({ detail: 'Task not found' });
    // Without the SSE Accept header: the same events as one JSON array.
    const trace = (await sdk('GET', `/${t.orgA}/agent-execution/${taskId}/events`)).json();
    expect(trace).toEqual(events);

    // Tasks.alist(agent_id, filters) and Tasks.alist_user_tasks(user_id, filters).
    const history = await sdk('GET', `/agent-execution/executions/history/${agentId}?status=completed`);
    valid(listOf(TasksListItemSchema), history.json());
    expect(history.json().map((x: { id: string }) => x.id)).toEqual([taskId]);
    expect((await sdk('GET', `/agent-execution/executions/history/${agentId}?status=failed`)).json()).toEqual([]);
    expect((await sdk('GET', `/agent-execution/executions/history/${agentId}?parent_task_id=${taskId}`)).json()).toEqual([]);
    const byUser = await sdk('GET', '/agent-execution/executions/history/user/u-1');
    valid(listOf(TasksListItemSchema), byUser.json());
    expect(byUser.json()).toEqual([expect.objectContaining({ id: taskId, user_id: 'u-1', source_node_type: 'sdk' })]);
    expect((await sdk('GET', '/agent-execution/executions/history/user/u-1', undefined, { 'x-api-key': t.keyB })).json()).toEqual([]);
    const unsupported = await sdk('GET', `/agent-execution/executions/history/${agentId}?internal_status=x`);
    expect([unsupported.statusCode, unsupported.json().detail[0].loc]).toEqual([422, ['query', 'internal_status']]);

    // Task.asave() re-sends the task it loaded (without configuration and deep_planning): nothing changes.
    const saved = await sdk('PATCH', `/agent-execution/${taskId}/update`, status.json());
    expect(saved.statusCode, saved.body).toBe(200);
    valid(TaskSchema, saved.json());
    // Setting a result the worker did not produce is refused, not dropped.
    const rewrite = await sdk('PATCH', `/agent-execution/${taskId}/update`, { ...(status.json() as object), result: 'edited' });
    expect(rewrite.statusCode).toBe(409);
    expect(rewrite.json().detail).toMatch(/result/);
    expect((await sdk('GET', `/agent-execution/${taskId}/status`)).json().result).toBe('Sunny, 21.5 degrees.');
  });

  it('stops a running task with DELETE /agent-execution/{id} and with a status "stopped" update', async () => {
    for (const how of ['delete', 'update'] as const) {
      llm.reply({ text: 'late', delayMs: 30_000 });
      const id = (await sdk('POST', `/agent-execution/${agentId}`, sdkCreateTaskPayload('slow'))).json().id as string;
      await t.waitTask(id, (x) => x.status === 'executing');
      const r = how === 'delete' ? await sdk('DELETE', `/agent-execution/${id}`) : await sdk('PATCH', `/agent-execution/${id}/update`, { status: 'stopped' });
      expect(r.statusCode, r.body).toBe(200);
      valid(TaskSchema, r.json());
      expect(r.json()).toMatchObject({ id, status: 'stopped', is_manually_stopped: true });
    }
    expect((await sdk('DELETE', '/agent-execution/nope')).json()).toEqual({ detail: 'Task not found' });
  });

  it('refuses create options Agentry cannot honour, naming them, and creates nothing', async () => {
    const before = (await t.req('GET', `/v1/agents/${agentId}/tasks`)).json().total;
    for (const [field, value] of [['run_locally', true], ['mcp_servers', [{ url: 'https://mcp.example.com' }]], ['think_mode', 'harder'], ['worker_id', 'w1'], ['title', 'T']] as const) {
      const r = await sdk('POST', `/agent-execution/${agentId}`, sdkCreateTaskPayload('x', { [field]: value }));
      expect(r.statusCode, `${field}: ${r.body}`).toBe(422);
      expect(r.json().detail[0].loc).toEqual(['body', field]);
    }
    expect((await t.req('GET', `/v1/agents/${agentId}/tasks`)).json().total).toBe(before);
  });

  it("invokes the agent's tool (and its preflight) and a standalone tool, through the connection", async () => {
    // Tool.acall_remote_tool: x-agent-version, x-execution-id, the payload as the tool schema shapes it.
    const payload = { body_params: {}, query_params: {}, path_params: { city: 'Paris' }, headers: {} };
    const r = await sdk('POST', `/agents/${agentId}/operations/getWeather`, payload, { 'x-agent-version': '2', 'x-execution-id': 'task-1' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status_code: 200, result: { temp: 21.5, key: 'wk' } });
    // Tool.agraph_preflight_check of a local tool: validation only, nothing is called.
    const calls = up.requests.length;
    const pre = await sdk('POST', `/agents/${agentId}/operations/my_local_fn`, { body_params: { input: { a: 1 }, output: 2 } }, { 'x-preflight-check': 'true', 'x-execution-id': 'task-1' });
    expect([pre.statusCode, pre.json()]).toEqual([200, {}]);
    expect(up.requests.length).toBe(calls);
    expect((await sdk('POST', `/agents/${agentId}/operations/nope`, payload)).json()).toEqual({ detail: 'Tool not found' });
    expect((await sdk('POST', `/agents/${agentId}/operations/getWeather`, payload, { 'x-api-key': t.keyB })).json()).toEqual({ detail: 'Agent not found' });

    // ToolsRepository.aload_tool_by_id and the standalone invocation function.
    const ref = `${connectorId}_${weatherOpId}`;
    const def = await sdk('GET', `/tools/${ref}`);
    expect(def.statusCode, def.body).toBe(200);
    valid(StandaloneToolSchema, def.json());
    expect(def.json()).toMatchObject({ id: ref, name: 'getWeather' });
    const inv = await sdk('POST', `/tools/${ref}`, payload);
    expect(inv.json()).toMatchObject({ status_code: 200, result: { temp: 21.5 } });
    expect((await sdk('GET', `/tools/${ref}`, undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
  });

  it('serves knowledge bases: create, list, details, documents, search, erase', async () => {
    up.on('GET', '/docs/rivers.txt', () => ({ text: 'The Seine flows through Paris.', headers: { 'content-type': 'text/plain' } }));
    await t.c.knowledgeIndexer.start();
    const created = await sdk('POST', '/knowledge_bases/create', { name: 'rivers', description: '' });
    expect(created.statusCode, created.body).toBe(201);
    valid(KnowledgeBaseSchema, created.json());
    const kb = created.json().id as string;
    valid(listOf(KnowledgeBaseSchema), (await sdk('GET', '/knowledge_bases')).json());
    valid(KnowledgeBaseSchema, (await sdk('GET', `/knowledge_bases/${kb}/details`)).json());

    const added = await sdk('POST', `/knowledge_bases/${kb}`, [{ document_url: `${up.url}/docs/rivers.txt`, sync: false }]);
    expect(added.statusCode, added.body).toBe(201);
    valid(listOf(KnowledgeBaseDocumentItemSchema), added.json());
    const docId = added.json()[0].id as string;
    for (let i = 0; i < 200 && (await t.req('GET', `/v1/knowledge/${kb}/documents/${docId}`)).json().status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
    const docs = (await sdk('GET', `/knowledge_bases/${kb}/list`)).json();
    valid(listOf(KnowledgeBaseDocumentItemSchema), docs);
    expect(docs).toEqual([expect.objectContaining({ id: docId, document_url: `${up.url}/docs/rivers.txt` })]);

    // KnowledgeBase.asearch: use_bubble and bubble_size are always sent.
    const hits = await sdk('GET', `/knowledge_bases/${kb}?search_query=Seine&use_bubble=false&bubble_size=1000&top_k=10`);
    expect(hits.statusCode, hits.body).toBe(200);
    valid(listOf(KnowledgeBaseSearchResultSchema), hits.json());
    expect(hits.json()[0].content).toContain('Seine');
    expect((await sdk('GET', `/knowledge_bases/${kb}?search_query=Seine&use_bubble=true`)).statusCode).toBe(422);
    expect((await sdk('POST', `/knowledge_bases/${kb}`, [{ document_url: `${up.url}/docs/rivers.txt`, sync: true }])).statusCode).toBe(422);

    // The SDK's httpx client sends no body with DELETE: the ids must come as a JSON array.
    expect((await t.app.inject({ method: 'DELETE', url: `/knowledge_bases/${kb}`, headers: { 'x-api-key': t.keyA } })).statusCode).toBe(422);
    expect((await sdk('DELETE', `/knowledge_bases/${kb}`, [docId, 'missing'])).json()).toEqual({ detail: 'Document not found' });
    expect((await sdk('GET', `/knowledge_bases/${kb}/list`)).json()).toHaveLength(1);
    expect((await sdk('DELETE', `/knowledge_bases/${kb}`, [docId])).statusCode).toBe(200);
    expect((await sdk('GET', `/knowledge_bases/${kb}/list`)).json()).toEqual([]);

    expect((await sdk('GET', `/knowledge_bases/${kb}/details`, undefined, { 'x-api-key': t.keyB })).json()).toEqual({ detail: 'Knowledge base not found' });
    expect((await sdk('DELETE', `/knowledge_bases/${kb}/erase`)).statusCode).toBe(200);
    expect((await sdk('GET', `/knowledge_bases/${kb}/details`)).statusCode).toBe(404);
  });

  it("runs the CLI's agent CRUD with agent_id and organization_id in the body", async () => {
    const created = await cli('POST', '/agents-crud/tools/crud/create', { name: `cli-agent-${kind}`, deployment_type: 'serverless', using_nemo: false, organization_id: t.orgA });
    expect(created.statusCode, created.body).toBe(201);
    valid(AgentSchema, created.json());
    const id = created.json().id as string;
    const updated = await cli('PATCH', '/agents-crud/tools/crud/update', { agent_id: id, organization_id: t.orgA, icon: '🤖', instructions: { role: 'A helper', goal: 'Help', general: 'Kindly' } });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ icon: '🤖', instructions: { role: ['A helper'], goal: ['Help'], general: 'Kindly' } });
    expect((await cli('PUT', '/agents-crud/tools/crud/deploy', { agent_id: id, organization_id: t.orgA })).json().version).toBe(created.json().version + 1);
    // Another organization's id in the body, or B's key on A's agent: answered as missing, nothing changes.
    expect((await cli('PUT', '/agents-crud/tools/crud/deploy', { agent_id: id, organization_id: orgB })).json()).toEqual({ detail: 'Agent not found' });
    expect((await cli('DELETE', '/agents-crud/tools/crud/delete', { agent_id: id }, t.keyB)).json()).toEqual({ detail: 'Agent not found' });
    expect((await cli('PATCH', '/agents-crud/tools/crud/update', { agent_id: id, unknown_field: 1 })).statusCode).toBe(422);
    expect((await cli('DELETE', '/agents-crud/tools/crud/delete', { agent_id: id, organization_id: t.orgA })).statusCode).toBe(200);
    expect((await t.req('GET', `/v1/agents/${id}`)).statusCode).toBe(404);

    const interfaces = (await cli('POST', '/agents-crud/tools/agent_tools/search-interfaces', { search_phrase: '', list_mode: true })).json();
    expect(interfaces).toEqual([expect.objectContaining({ id: connectorId, name: 'weather' })]);
    const ops = (await cli('POST', '/agents-crud/tools/agent_tools/search-operations', { interfaces: [{ type: 'interface', asset_id: connectorId }], search_phrases: [], list_mode: true })).json();
    expect(ops).toEqual([expect.objectContaining({ id: weatherOpId, name: 'getWeather', id_to_use_on_graph: 'getWeather', parent_id: connectorId, method: 'get', path: '/weather/{city}' })]);
  });

  it('records a task the SDK ran itself (report_task): finished, with its result, tokens, duration and trace', async () => {
    // Task.areport_external_task's TaskReportRequest, as model_dump_safe sends it.
    const report = { id: null, input: 'Summarise the ticket', llm_response: { choices: [{ message: { content: 'Done' } }] }, tokens: { prompt_tokens: 12, completion_tokens: 5 }, is_success: true, result: 'Summary: done', duration: 2.5, used_tools: ['getWeather'] };
    const r = await sdk('POST', `/agent-execution/${agentId}/report_task`, report);
    expect(r.statusCode, r.body).toBe(200);
    valid(TaskSchema, r.json());
    const id = r.json().id as string;
    const task = (await t.req('GET', `/v1/tasks/${id}`)).json();
    expect(task).toMatchObject({ status: 'completed', result: 'Summary: done', source: 'sdk', input: { text: 'Summarise the ticket' }, tokens: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } });
    expect(Date.parse(task.finished_at) - Date.parse(task.started_at)).toBe(2500);
    const finished = (await t.req('GET', `/v1/tasks/${id}/events`)).json().find((e: { type: string }) => e.type === 'task_finished');
    expect(finished.data).toMatchObject({ reported: true, used_tools: ['getWeather'], llm_response: JSON.stringify(report.llm_response) });
    // Reported once: the same id again is a conflict; a failed run is recorded failed; another org's agent is missing.
    expect((await sdk('POST', `/agent-execution/${agentId}/report_task`, { ...report, id })).statusCode).toBe(409);
    const failed = await sdk('POST', `/agent-execution/${agentId}/report_task`, { ...report, id: `ext-${kind}-1`, is_success: false, result: 'boom' });
    expect(failed.json()).toMatchObject({ id: `ext-${kind}-1`, status: 'failed', result: 'boom' });
    expect((await sdk('POST', `/agent-execution/${agentId}/report_task`, report, { 'x-api-key': t.keyB })).json()).toEqual({ detail: 'Agent not found' });
    expect((await sdk('POST', `/agent-execution/${agentId}/report_task`, { ...report, duration: -1 })).statusCode).toBe(422);
  });

  it('answers 501 with the reason for routes Agentry does not serve, after checking what they name', async () => {
    const db = await sdk('GET', `/agents/${agentId}/db`);
    expect(db.statusCode).toBe(501);
    expect(db.json().detail).toMatch(/not supported by Agentry/);
    expect((await sdk('GET', '/agents/nope/db')).statusCode).toBe(404);
    expect((await sdk('GET', '/metadata/default_llm_extra_headers')).json()).toEqual({});
  });
});
