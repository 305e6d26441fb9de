import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

/** The official MCP client SDK, over real HTTP, lists an organization's discoverable agents as tools and calls them. */
describe.each(TEST_DBS)('Agentry agents as an MCP server (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let api: UpstreamApi;
  let url: string;
  beforeAll(async () => {
    [t, llm, api] = await Promise.all([createTasksApp(kind), startOpenAIServer(), startUpstreamApi()]);
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    llm.handle((r) => ({ text: `weather for ${r.lastUserText}: sunny` }));
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close(), api?.close()]);
  });

  const connect = async (key: string) => {
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { 'x-api-key': key } } }));
    return client;
  };

  it('lists one tool per discoverable agent and runs the agent as a task with source mcp', async () => {
    const suffix = Math.random().toString(36).slice(2, 7);
    const weather = await t.createAgent(openaiAgentFields(llm.baseUrl, { name: `Weather Bot ${suffix}`, description: 'Knows the weather' }));
    await t.createAgent(openaiAgentFields(llm.baseUrl, { name: `Hidden ${suffix}`, discoverable: false }));
    const client = await connect(t.keyA);
    const { tools } = await client.listTools();
    const tool = tools.find((x) => x.name === `Weather_Bot_${suffix}`);
    expect(tool).toMatchObject({ title: `Weather Bot ${suffix}`, inputSchema: { required: ['prompt'] } });
    expect(tool!.description).toContain('Knows the weather');
    expect(tools.some((x) => x.name.startsWith('Hidden'))).toBe(false);

    const r = await client.callTool({ name: tool!.name, arguments: { prompt: 'Paris' } });
    expect(r.isError).toBe(false);
    expect(r.content).toEqual([{ type: 'text', text: 'weather for Paris: sunny' }]);
    const taskId = (r.structuredContent as { task_id: string }).task_id;
    const task = (await t.req('GET', `/v1/tasks/${taskId}`)).json() as Task;
    expect(task).toMatchObject({ source: 'mcp', agent_id: weather, status: 'completed' });

    // The same task_id continues the conversation.
    const again = await client.callTool({ name: tool!.name, arguments: { prompt: 'Rome', task_id: taskId } });
    expect((again.structuredContent as { task_id: string }).task_id).toBe(taskId);
    expect((await t.req('GET', `/v1/tasks/${taskId}/thread`)).json()).toHaveLength(4);
    await client.close();
  });

  it('reports a failed run and bad arguments as tool errors', async () => {
    api.on('POST', '/down', () => ({ status: 503, json: { error: 'maintenance' } }));
    const suffix = Math.random().toString(36).slice(2, 7);
    await t.createAgent({ name: `Flaky ${suffix}`, type: 'curl', connectivity_details: { url: `${api.url}/down` } });
    const client = await connect(t.keyA);
    const failed = await client.callTool({ name: `Flaky_${suffix}`, arguments: { prompt: 'hi' } });
    expect(failed.isError).toBe(true);
    expect((failed.content as { text: string }[])[0].text).toMatch(/answered HTTP 503/);
    expect((await client.callTool({ name: `Flaky_${suffix}`, arguments: {} })).isError).toBe(true);
    expect((await client.callTool({ name: 'no_such_agent', arguments: { prompt: 'x' } })).isError).toBe(true);
    await client.close();
  });

  it("refuses a wrong key; another organization's key sees none of these agents", async () => {
    await expect(connect('agk_' + 'x'.repeat(43))).rejects.toThrow(/403|Invalid API key/);
    const other = await connect(t.keyB);
    expect((await other.listTools()).tools).toEqual([]);
    await other.close();
    // Plain HTTP errors of the transport carry the contract's `detail` beside the JSON-RPC error.
    const r = await fetch(`${url}/v1/mcp`, { method: 'POST', headers: { 'x-api-key': t.keyA, 'content-type': 'application/json', accept: 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(r.status).toBe(406);
    expect(await r.json()).toMatchObject({ detail: expect.stringMatching(/Not Acceptable/), jsonrpc: '2.0' });
    expect((await fetch(`${url}/v1/mcp`, { headers: { 'x-api-key': t.keyA, accept: 'text/event-stream' } })).status).toBe(405);
  });
});
