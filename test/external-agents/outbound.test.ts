import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/tasks/task.types.js';
import { startFakeA2aServer, type FakeA2aServer } from '../fakes/a2a-server.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { TEST_DBS } from '../support/harness.js';
import { createTasksApp, openaiAgentFields, type TasksApp } from '../tasks/tasks-harness.js';

type TraceEvent = { type: string; data: Record<string, any> };

/** `curl` and `a2a` agents run as ordinary tasks against remote agents started here: a scripted HTTP API, and A2A agents built with the protocol SDK. */
describe.each(TEST_DBS)('external agents, outbound (%s)', (kind) => {
  let t: TasksApp;
  let api: UpstreamApi;
  let a2a: FakeA2aServer;
  let streaming: FakeA2aServer;
  let keyed: FakeA2aServer;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    [t, api, a2a, streaming, keyed, llm] = await Promise.all([
      createTasksApp(kind),
      startUpstreamApi(),
      startFakeA2aServer(),
      startFakeA2aServer({ streaming: true }),
      startFakeA2aServer({ auth: { header: 'x-agent-key', value: 'remote-key-1' } }),
      startOpenAIServer(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), api?.close(), a2a?.close(), streaming?.close(), keyed?.close(), llm?.close()]);
  });

  const invoke = async (agentId: string, text: string) => {
    const r = await t.req('POST', `/v1/agents/${agentId}/invoke`, { input: { text } });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as Task;
  };
  const trace = async (taskId: string) => (await t.req('GET', `/v1/tasks/${taskId}/events`)).json() as TraceEvent[];
  const remoteSteps = (events: TraceEvent[]) => events.filter((e) => e.type === 'tool_call_result' && e.data.remote === true).map((e) => e.data);
  const curlAgent = (details: Record<string, unknown>) => t.createAgent({ type: 'curl', connectivity_details: details });

  describe('curl', () => {
    it('sends the prompt where prompt_path says, with the credential of an org secret, and reads the answer at response_path', async () => {
      api.on('POST', '/chat', (r) => ({ json: { data: { choices: [{ text: `you said: ${JSON.parse(r.body).input.query}` }] } } }));
      const put = await t.req('PUT', '/v1/secrets/REMOTE_TOKEN', { value: 'tok-123' });
      expect(put.statusCode).toBeLessThan(300);
      const id = await curlAgent({
        url: `${api.url}/chat`,
        body: { model: 'm1', input: { lang: 'en' } },
        prompt_path: 'input.query',
        response_path: 'data.choices.0.text',
        auth_type: 'bearer',
        api_key_secret: 'REMOTE_TOKEN',
        custom_headers: { 'X-Tenant': 'acme' },
      });
      const task = await invoke(id, 'hello there');
      expect(task).toMatchObject({ status: 'completed', result: 'you said: hello there', source: 'api' });
      const sent = api.received('POST', '/chat').at(-1)!;
      expect(JSON.parse(sent.body)).toEqual({ model: 'm1', input: { lang: 'en', query: 'hello there' } });
      expect(sent.headers.authorization).toBe('Bearer tok-123');
      expect(sent.headers['x-tenant']).toBe('acme');
      const steps = remoteSteps(await trace(task.id));
      expect(steps).toHaveLength(1);
      expect(steps[0]).toMatchObject({ tool_name: 'curl POST', status: 200, is_error: false, result: 'you said: hello there' });
      expect(typeof steps[0].duration_ms).toBe('number');
      const thread = (await t.req('GET', `/v1/tasks/${task.id}/thread`)).json();
      expect(thread.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([['user', 'hello there'], ['assistant', 'you said: hello there']]);
    });

    it("the invocation's context reaches the agent: at context_path as an object, else after the prompt as text", async () => {
      api.on('POST', '/ctx', (r) => ({ json: { answer: `got ${JSON.parse(r.body).q}` } }));
      const body = { input: { text: 'hello' }, additional_context: 'order 42 is late', expected_output: 'one sentence', instructions_override: 'be brief', input_user: undefined };
      const structured = await curlAgent({ url: `${api.url}/ctx`, prompt_path: 'q', context_path: 'meta.context', response_path: 'answer' });
      const r1 = await t.req('POST', `/v1/agents/${structured}/invoke`, { ...body, input: { text: 'hello', user: { id: 'u-1', email: 'ada@example.com' } } });
      expect(r1.json().status, r1.body).toBe('completed');
      expect(JSON.parse(api.received('POST', '/ctx').at(-1)!.body)).toEqual({
        q: 'hello',
        meta: { context: { additional_context: 'order 42 is late', expected_output: 'one sentence', instructions_override: 'be brief', user: { id: 'u-1', email: 'ada@example.com' } } },
      });
      const plain = await curlAgent({ url: `${api.url}/ctx`, prompt_path: 'q', response_path: 'answer' });
      const r2 = await t.req('POST', `/v1/agents/${plain}/invoke`, body);
      expect(r2.json().status, r2.body).toBe('completed');
      expect(JSON.parse(api.received('POST', '/ctx').at(-1)!.body).q).toBe('hello\n\nAdditional context:\norder 42 is late\n\nExpected output:\none sentence\n\nInstructions for this task:\nbe brief');
    });

    it('puts the prompt in the query string for GET and returns a plain-text answer as it is', async () => {
      api.on('GET', '/ask', (r) => ({ text: `Q=${r.query.get('q')}` }));
      const id = await curlAgent({ url: `${api.url}/ask`, method: 'GET', prompt_path: 'q' });
      expect(await invoke(id, 'why?')).toMatchObject({ status: 'completed', result: 'Q=why?' });
    });

    it('ends the task error with a clear reason: HTTP error, refused credential, answer not JSON, missing path, timeout', async () => {
      api.on('POST', '/boom', () => ({ status: 500, json: { error: 'kaput' } }));
      api.on('POST', '/locked', () => ({ status: 401, json: { error: 'who are you' } }));
      api.on('POST', '/html', () => ({ text: '<html>nope</html>' }));
      api.on('POST', '/empty', () => ({ json: { other: 1 } }));
      api.on('POST', '/slow', () => ({ json: { answer: 'late' }, delayMs: 3000 }));
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ['/boom', {}, /answered HTTP 500.*kaput/],
        ['/locked', { auth_type: 'api_key', api_key: 'wrong', api_key_header_name: 'X-Key' }, /HTTP 401 \(authentication failed/],
        ['/html', { response_path: 'answer' }, /not JSON.*response_path 'answer'/],
        ['/empty', { response_path: 'answer' }, /nothing at connectivity_details.response_path 'answer'/],
        ['/slow', { timeout_seconds: 1 }, /did not answer within 1 s/],
      ];
      for (const [path, extra, reason] of cases) {
        const id = await curlAgent({ url: `${api.url}${path}`, ...extra });
        const task = await invoke(id, 'x');
        expect(task.status, path).toBe('error');
        expect(task.result, path).toMatch(reason);
        expect(remoteSteps(await trace(task.id)).at(-1)).toMatchObject({ is_error: true });
      }
    });

    it("holds a JSON answer to the invocation's output_schema", async () => {
      api.on('POST', '/json', (r) => ({ json: { answer: JSON.parse(r.body).prompt === 'good' ? '{"n": 1}' : '{"n": "one"}' } }));
      const id = await curlAgent({ url: `${api.url}/json`, response_path: 'answer' });
      const schema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
      const call = async (text: string) =>
        (await t.req('POST', `/v1/agents/${id}/invoke`, { input: { text }, output_format: 'json', output_schema: schema })).json() as Task;
      expect(await call('good')).toMatchObject({ status: 'completed', result: '{"n": 1}' });
      const bad = await call('bad');
      expect(bad.status).toBe('failed');
      expect(bad.result).toMatch(/does not match output_schema: \/n/);
    });

    it('refuses bad connectivity_details and local-only fields with 422, creating nothing', async () => {
      const before = (await t.req('GET', '/v1/agents')).json().total;
      const bad: [Record<string, unknown>, string[]][] = [
        [{ type: 'curl', connectivity_details: {} }, ['body', 'connectivity_details', 'url']],
        [{ type: 'curl', connectivity_details: { url: 'ftp://x.example.com' } }, ['body', 'connectivity_details', 'url']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com', method: 'DELETE' } }, ['body', 'connectivity_details', 'method']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com', auth_type: 'bearer' } }, ['body', 'connectivity_details', 'api_key']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com', method: 'GET', body: { a: 1 } } }, ['body', 'connectivity_details', 'body']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com', timeout_seconds: 0 } }, ['body', 'connectivity_details', 'timeout_seconds']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com', custom_headers: { 'bad header': 'v' } } }, ['body', 'connectivity_details', 'custom_headers', 'bad header']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com', auth_type: 'oauth' } }, ['body', 'connectivity_details', 'auth_type']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com', surprise: 1 } }, ['body', 'connectivity_details', 'surprise']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, tools: [{ type: 'skill', skill_name: 'x' }] }, ['body', 'tools']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, instructions: { general: 'be nice' } }, ['body', 'instructions']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, llm_api_base: 'https://llm.example.com' }, ['body', 'llm_api_base']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com' }, is_supervised: true }, ['body', 'is_supervised']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, agno_settings: { pii_detection_enabled: true } }, ['body', 'agno_settings', 'pii_detection_enabled']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com' }, agno_settings: { user_memories: true } }, ['body', 'agno_settings', 'user_memories']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, can_self_schedule: true }, ['body', 'can_self_schedule']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, deep_planning: true }, ['body', 'deep_planning']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com' }, agno_settings: { tool_call_limit: 5 } }, ['body', 'agno_settings', 'tool_call_limit']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com' }, agno_settings: { num_history_runs: 3 } }, ['body', 'agno_settings', 'num_history_runs']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, agno_settings: { tool_calls_compression: { enabled: true } } }, ['body', 'agno_settings', 'tool_calls_compression', 'enabled']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, task_level_strategies: { iterative_strategy: { max_iterations: 3 } } }, ['body', 'task_level_strategies', 'iterative_strategy']],
        [{ type: 'a2a', connectivity_details: { url: 'https://x.example.com' }, model_provider: 'openai' }, ['body', 'model_provider']],
        [{ type: 'curl', connectivity_details: { url: 'https://x.example.com' }, skills: [{ name: 'draft-email' }] }, ['body', 'skills']],
      ];
      for (const [fields, loc] of bad) {
        const r = await t.req('POST', '/v1/agents', { name: `bad ${Math.random()}`, ...fields });
        expect(r.statusCode, JSON.stringify(fields)).toBe(422);
        expect(r.json().detail.map((d: { loc: string[] }) => d.loc), JSON.stringify(fields)).toContainEqual(loc);
      }
      expect((await t.req('GET', '/v1/agents')).json().total).toBe(before);
      // PATCH turning a regular agent into an a2a agent without a URL is refused too.
      const regular = await t.createAgent();
      const r = await t.req('PATCH', `/v1/agents/${regular}?deploy=true`, { type: 'a2a' });
      expect(r.statusCode).toBe(422);
      expect(r.json().detail[0].loc).toEqual(['body', 'connectivity_details', 'url']);
    });
  });

  describe('a2a', () => {
    it('discovers a v0.3 agent built with the SDK, sends message/send and polls tasks/get; each call is a trace step', async () => {
      const id = await t.createAgent({ type: 'a2a', connectivity_details: { url: a2a.url } });
      const task = await invoke(id, 'hello a2a');
      expect(task).toMatchObject({ status: 'completed', result: 'echo: hello a2a' });
      expect(a2a.methods[0]).toBe('message/send');
      expect(a2a.methods.slice(1).every((m) => m === 'tasks/get')).toBe(true);
      expect(a2a.methods.length).toBeGreaterThan(1);
      const steps = remoteSteps(await trace(task.id));
      expect(steps.map((s) => s.tool_name)).toEqual(['a2a agent card', 'a2a message/send', ...Array(steps.length - 2).fill('a2a tasks/get')]);
      expect(steps[1].remote_task_id).toEqual(expect.any(String));
      expect(steps.at(-1)).toMatchObject({ status: 'completed', remote_task_id: steps[1].remote_task_id });
    });

    it("the invocation's context goes with the prompt: a second text part, and the message's metadata", async () => {
      const id = await t.createAgent({ type: 'a2a', connectivity_details: { url: a2a.url } });
      const r = await t.req('POST', `/v1/agents/${id}/invoke`, { input: { text: 'hello ctx', user: { first_name: 'Ada' } }, additional_context: 'customer tier: gold', instructions_override: 'answer in French' });
      expect(r.json().status, r.body).toBe('completed');
      const sent = a2a.messages.at(-1)!;
      expect(sent.parts).toEqual(['hello ctx', 'Additional context:\ncustomer tier: gold\n\nInstructions for this task:\nanswer in French']);
      expect(sent.metadata).toEqual({ additional_context: 'customer tier: gold', instructions_override: 'answer in French', user: { first_name: 'Ada' } });
      // Without context the message is the prompt alone, as before.
      await invoke(id, 'plain');
      expect(a2a.messages.at(-1)).toEqual({ parts: ['plain'], metadata: undefined });
    });

    it('streams with message/stream when the card says so; the artifact text reaches the trace as chunks', async () => {
      const id = await t.createAgent({ type: 'a2a', connectivity_details: { url: streaming.url } });
      const task = await invoke(id, 'stream me');
      expect(task).toMatchObject({ status: 'completed', result: 'echo: stream me' });
      expect(streaming.methods).toEqual(['message/stream']);
      const events = await trace(task.id);
      expect(events.filter((e) => e.type === 'chunk').map((e) => e.data.text)).toEqual(['echo: stream me']);
      expect(remoteSteps(events).at(-1)).toMatchObject({ tool_name: 'a2a message/stream', status: 'completed', remote_task_id: expect.any(String) });
    });

    it('a task the remote agent fails ends failed with its words', async () => {
      const id = await t.createAgent({ type: 'a2a', connectivity_details: { url: a2a.url } });
      const task = await invoke(id, 'fail now');
      expect(task.status).toBe('failed');
      expect(task.result).toMatch(/reported the task failed: the flux capacitor broke/);
    });

    it('sends the api key in the named header; a wrong key ends the task error saying the credentials were refused', async () => {
      const good = await t.createAgent({ type: 'a2a', connectivity_details: { url: keyed.url, auth_type: 'api_key', api_key_header_name: 'X-Agent-Key', api_key: 'remote-key-1' } });
      const shown = (await t.req('GET', `/v1/agents/${good}`)).json();
      expect(shown.connectivity_details).toMatchObject({ api_key: '********', auth_type: 'api_key' });
      expect(await invoke(good, 'with key')).toMatchObject({ status: 'completed', result: 'echo: with key' });
      expect(keyed.headers.at(-1)!['x-agent-key']).toBe('remote-key-1');

      const bad = await t.createAgent({ type: 'a2a', connectivity_details: { url: keyed.url, auth_type: 'api_key', api_key_header_name: 'X-Agent-Key', api_key: 'nope' } });
      const task = await invoke(bad, 'with key');
      expect(task.status).toBe('error');
      expect(task.result).toMatch(/refused the credentials \(HTTP 401\)/);
    });

    it('an unreachable agent, or one the egress policy refuses, ends the task error', async () => {
      const gone = await t.createAgent({ type: 'a2a', connectivity_details: { url: 'http://127.0.0.1:9' } });
      const task = await invoke(gone, 'anyone?');
      expect(task.status).toBe('error');
      expect(task.result).toMatch(/A2A agent call failed/);
      const privateNet = await t.createAgent({ type: 'a2a', connectivity_details: { url: 'http://10.1.2.3:8080' } });
      const refused = await invoke(privateNet, 'anyone?');
      expect(refused.status).toBe('error');
      expect(refused.result).toMatch(/refused: 10\.1\.2\.3 is a private/);
    });

    it('stopping the task cancels the remote task (tasks/cancel)', async () => {
      const id = await t.createAgent({ type: 'a2a', connectivity_details: { url: a2a.url } });
      const r = await t.req('POST', `/v1/agents/${id}/invoke/async`, { input: { text: 'slow job' } });
      const taskId = r.json().id as string;
      const until = async (cond: () => boolean) => {
        for (let i = 0; i < 200 && !cond(); i++) await new Promise((res) => setTimeout(res, 50));
        expect(cond()).toBe(true);
      };
      await until(() => a2a.received.includes('slow job'));
      await until(() => a2a.methods.includes('tasks/get'));
      expect((await t.req('POST', `/v1/tasks/${taskId}/stop`)).json().status).toBe('stopped');
      await until(() => a2a.cancels.length === 1);
      expect(a2a.methods).toContain('tasks/cancel');
    });
  });

  describe('as ordinary tasks', () => {
    it('a manager agent calls an external agent as its sub-agent', async () => {
      api.on('POST', '/sub', (r) => ({ json: { answer: `sub got: ${JSON.parse(r.body).prompt}` } }));
      const sub = await t.createAgent({ name: `curl sub ${Math.random()}`, type: 'curl', connectivity_details: { url: `${api.url}/sub`, response_path: 'answer' } });
      let calls = 0;
      llm.handle((r) => (calls++ === 0 ? { toolCalls: [{ name: r.tools[0], arguments: { input: 'summarize this' } }] } : { text: 'manager done' }));
      const manager = await t.createAgent(openaiAgentFields(llm.baseUrl, { tools: [{ type: 'agent', agent_id: sub }] }));
      const task = await invoke(manager, 'go');
      expect(task).toMatchObject({ status: 'completed', result: 'manager done' });
      expect(task.sub_executions).toHaveLength(1);
      const child = (await t.req('GET', `/v1/tasks/${task.sub_executions[0]}`)).json() as Task;
      expect(child).toMatchObject({ source: 'sub_agent', agent_id: sub, status: 'completed', result: 'sub got: summarize this', parent_execution: task.id });
      llm.handle(null);
    });

    it('streams over /invoke/stream and retries a failed remote call under retry_strategy', async () => {
      let n = 0;
      api.on('POST', '/flaky', () => (n++ === 0 ? { status: 502, json: { error: 'bad gateway' } } : { json: { answer: 'second time lucky' } }));
      const id = await t.createAgent({
        type: 'curl',
        connectivity_details: { url: `${api.url}/flaky`, response_path: 'answer' },
        task_level_strategies: { retry_strategy: { enabled: true, max_retries: 2 } },
      });
      const r = await t.req('POST', `/v1/agents/${id}/invoke/stream`, { input: { text: 'again' } });
      expect(r.headers['content-type']).toMatch(/text\/event-stream/);
      const events = r.body
        .split('\n\n')
        .filter((b) => b.includes('data: '))
        .map((b) => JSON.parse(b.slice(b.indexOf('data: ') + 6)) as TraceEvent);
      const finished = events.find((e) => e.type === 'task_finished');
      expect(finished?.data).toMatchObject({ status: 'completed', result: 'second time lucky', execution_attempts: 2 });
      expect(events.filter((e) => e.type === 'tool_call_result').map((e) => e.data.is_error)).toEqual([true, false]);
    });
  });
});
