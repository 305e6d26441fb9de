import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { startAnthropicServer } from '../fakes/anthropic-server.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { scriptedAgentFields } from '../support/agents.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, type TasksApp } from '../tasks/tasks-harness.js';

/** An agent whose tool is a connector operation, called by the scripted LLM in a task (issue 5 acceptance). */

const doc = (serverUrl: string) => ({
  openapi: '3.1.0',
  info: { title: 'Weather', version: '1' },
  servers: [{ url: serverUrl }],
  paths: {
    '/weather/{city}': {
      get: {
        operationId: 'getWeather',
        summary: 'Current weather of a city',
        parameters: [
          { name: 'city', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'units', in: 'query', schema: { type: 'string', enum: ['metric', 'imperial'] } },
        ],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Weather' } } } } },
      },
    },
    '/alerts': {
      post: {
        operationId: 'createAlert',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } } } } },
        responses: { '201': { description: 'created' } },
      },
    },
  },
  components: { schemas: { Weather: { type: 'object', properties: { temp: { type: 'number' }, sky: { type: 'string' } } } } },
});

describe.each(TEST_DBS)('connector operations as agent tools (%s)', (kind) => {
  let t: TasksApp;
  let llm: ScriptedLlmServer;
  let up: UpstreamApi;
  let connectorId: string;
  let connectionId: string;
  let weatherOpId: string;

  beforeAll(async () => {
    [t, llm, up] = await Promise.all([createTasksApp(kind), startOpenAIServer(), startUpstreamApi()]);
    up.on('GET', '/weather/Paris', (r) => ({ json: { temp: 21.5, sky: 'clear', key: r.headers['x-api-key'] ?? null } }));
    connectorId = (await t.req('POST', '/v1/connectors', { name: 'weather', openapi: doc(up.url) })).json().id;
    connectionId = (await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'w', security: { type: 'api_key', in: 'header', name: 'X-Api-Key', value: 'wk' } })).json().id;
    const ops = (await t.req('GET', `/v1/tools/connectors/${connectorId}/operations`)).json();
    weatherOpId = ops.find((o: { operationId: string }) => o.operationId === 'getWeather').id;
  });
  afterAll(async () => {
    await Promise.all([t?.close(), llm?.close(), up?.close()]);
  });
  beforeEach(() => {
    llm.requests.length = 0;
  });

  const llmFields = () => scriptedAgentFields(llm.baseUrl);

  it('resolves action entries into attached_tools and graph, and refuses unknown connections and operations', async () => {
    const agent = await t.createAgent({ ...llmFields(), tools: [{ type: 'action', connection_id: connectionId, operation_ids: ['getWeather', weatherOpId] }] });
    const stored = (await t.req('GET', `/v1/agents/${agent}`)).json();
    expect(stored.attached_tools).toEqual([{ id: connectionId, operation_ids: [weatherOpId] }]);
    expect(stored.graph).toEqual([expect.objectContaining({ item_id: 'getWeather', type: 'tool', targets: [] })]);

    const badConn = await t.req('POST', '/v1/agents', { name: `bad-${kind}-1`, tools: [{ type: 'action', connection_id: 'nope', operation_ids: ['getWeather'] }] });
    expect(badConn.statusCode).toBe(422);
    expect(badConn.json().detail[0].loc).toEqual(['body', 'tools', 0, 'connection_id']);
    const badOp = await t.req('POST', '/v1/agents', { name: `bad-${kind}-2`, tools: [{ type: 'action', connection_id: connectionId, operation_ids: ['getWeather', 'nope'] }] });
    expect(badOp.statusCode).toBe(422);
    expect(badOp.json().detail[0].loc).toEqual(['body', 'tools', 0, 'operation_ids', 1]);
    const foreign = await t.req('POST', '/v1/agents', { name: `bad-${kind}-3`, tools: [{ type: 'action', connection_id: connectionId, operation_ids: ['getWeather'] }] }, { 'x-api-key': t.keyB });
    expect(foreign.statusCode).toBe(422);
  });

  it('the model calls the operation; the upstream receives it with the connection credentials', async () => {
    const agent = await t.createAgent({ ...llmFields(), tools: [{ type: 'action', connection_id: connectionId, operation_ids: ['getWeather', 'createAlert'] }] });
    llm.reply(
      { toolCalls: [{ name: 'getWeather', arguments: { path_params: { city: 'Paris' }, query_params: { units: 'metric' } } }] },
      { text: 'It is 21.5 degrees and clear in Paris.' },
    );
    const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text: 'Weather in Paris?' } });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json() as Task).toMatchObject({ status: 'completed', result: 'It is 21.5 degrees and clear in Paris.' });

    const offered = llm.requests[0].body.tools.map((x: { function: { name: string; parameters: Record<string, any> } }) => x.function);
    const weather = offered.find((f: { name: string }) => f.name === 'getWeather');
    expect(weather.parameters.type).toBe('object');
    expect(weather.parameters.properties.path_params.properties.city).toEqual({ type: 'string' });
    expect(offered.map((f: { name: string }) => f.name)).toContain('createAlert');

    const sent = up.received('GET', '/weather/Paris').at(-1)!;
    expect(sent.headers['x-api-key']).toBe('wk');
    expect(sent.query.get('units')).toBe('metric');
    const toolMsg = llm.requests[1].body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(JSON.parse(toolMsg.content)).toMatchObject({ status_code: 200, result: { temp: 21.5, sky: 'clear' } });
  });

  it('offers the operation to an Anthropic model with an object input schema and calls it', async () => {
    const anthropic = await startAnthropicServer();
    try {
      const agent = await t.createAgent(
        scriptedAgentFields(anthropic.baseUrl, { model_provider: 'anthropic', tools: [{ type: 'action', connection_id: connectionId, operation_ids: [weatherOpId] }] }),
      );
      anthropic.reply({ toolCalls: [{ name: 'getWeather', arguments: { path_params: { city: 'Paris' } } }] }, { text: 'Clear, 21.5.' });
      const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text: 'Weather in Paris?' } });
      expect(r.json()).toMatchObject({ status: 'completed', result: 'Clear, 21.5.' });
      const tool = anthropic.requests[0].body.tools.find((x: { name: string }) => x.name === 'getWeather');
      expect(tool.input_schema).toMatchObject({ type: 'object', properties: { path_params: { type: 'object', required: ['city'] } } });
      expect(JSON.stringify(anthropic.requests[1].body.messages)).toContain('21.5');
    } finally {
      await anthropic.close();
    }
  });

  it('invalid arguments come back to the model as a tool error it can correct', async () => {
    const agent = await t.createAgent({ ...llmFields(), tools: [{ type: 'action', connection_id: connectionId, operation_ids: ['getWeather'] }] });
    llm.reply({ toolCalls: [{ name: 'getWeather', arguments: { query_params: { units: 'kelvin' } } }] }, { text: 'Sorry.' });
    const r = await t.req('POST', `/v1/agents/${agent}/invoke`, { input: { text: 'Weather?' } });
    expect(r.json()).toMatchObject({ status: 'completed', result: 'Sorry.' });
    const toolMsg = llm.requests[1].body.messages.find((m: { role: string }) => m.role === 'tool');
    // Checked against the offered schema before anything is sent: both problems are named, the upstream sees nothing.
    expect(toolMsg.content).toMatch(/path_params/);
    expect(toolMsg.content).toMatch(/units/);
    expect(up.received('GET', '/weather/undefined')).toEqual([]);
  });

  it('with stop_strategy, an upstream error answer ends the run failed; invalid arguments do not', async () => {
    up.on('GET', '/weather/Berlin', () => ({ status: 503, json: { error: 'weather service down' } }));
    const tools = [{ type: 'action', connection_id: connectionId, operation_ids: ['getWeather'] }];
    const stopping = await t.createAgent({ ...llmFields(), tools, task_level_strategies: { stop_strategy: { enabled: true } } });
    llm.reply({ toolCalls: [{ name: 'getWeather', arguments: { path_params: { city: 'Berlin' } } }] });
    const failed = (await t.req('POST', `/v1/agents/${stopping}/invoke`, { input: { text: 'Weather in Berlin?' } })).json() as Task;
    expect(failed.status).toBe('failed');
    expect(failed.result).toContain('The tool "getWeather" failed, and stop_strategy.stop_on_failure ends the run');
    expect(failed.result).toContain('503');

    // The model's own mistake is told to it, as without the strategy.
    llm.requests.length = 0;
    llm.reply({ toolCalls: [{ name: 'getWeather', arguments: { query_params: { units: 'kelvin' } } }] }, { text: 'Sorry.' });
    expect((await t.req('POST', `/v1/agents/${stopping}/invoke`, { input: { text: 'Weather?' } })).json()).toMatchObject({ status: 'completed', result: 'Sorry.' });

    // Without it, the model reads the error answer and carries on.
    const carrying = await t.createAgent({ ...llmFields(), tools });
    llm.reply({ toolCalls: [{ name: 'getWeather', arguments: { path_params: { city: 'Berlin' } } }] }, { text: 'The weather service is down.' });
    expect((await t.req('POST', `/v1/agents/${carrying}/invoke`, { input: { text: 'Weather in Berlin?' } })).json()).toMatchObject({ status: 'completed', result: 'The weather service is down.' });
  });
});
