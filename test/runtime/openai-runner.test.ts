import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RunAbortedError } from '../../src/runtime/task-runner.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { eventsOf, makeRuntime, makeTask, openaiAgent, runOnce, testToolProvider } from './runtime-helpers.js';

describe('agent runner over an OpenAI-compatible provider', () => {
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
  });
  afterAll(async () => llm?.close());
  beforeEach(() => {
    llm.requests.length = 0;
    llm.handle(null);
  });

  it('answers a plain question with the prompt, headers and key the agent configures', async () => {
    const rt = makeRuntime();
    llm.reply({ text: 'It is sunny and 21 degrees in Paris today.', usage: { prompt_tokens: 42, completion_tokens: 11 } });
    const agent = openaiAgent(llm.baseUrl, { llm_extra_headers: { 'x-team': 'weather' }, expected_output: 'One sentence.' });
    const rec = await runOnce(rt, { agent, task: makeTask({ additional_context: 'The user is in France.' }) });

    expect(rec.outcome).toMatchObject({
      status: 'completed',
      result: 'It is sunny and 21 degrees in Paris today.',
      tokens: { prompt_tokens: 42, completion_tokens: 11, total_tokens: 53 },
      llm_model_provider: 'openai',
      llm_model_name: 'gpt-test',
    });
    expect(llm.requests).toHaveLength(1);
    const req = llm.requests[0];
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.stream).toBe(true);
    expect(req.body.model).toBe('gpt-test');
    expect(req.headers.authorization).toBe('Bearer sk-agent-key');
    expect(req.headers['x-team']).toBe('weather');
    for (const part of ['Weather Bot', 'You are a meteorologist', 'Give accurate forecasts', 'Be brief.', 'One sentence.', 'The user is in France.']) {
      expect(req.system).toContain(part);
    }
    expect(req.lastUserText).toBe('What is the weather in Paris?');

    // streamed text reaches the trace as chunks; the call itself as one llm_call
    expect(eventsOf(rec, 'chunk').map((c) => c.text).join('')).toBe('It is sunny and 21 degrees in Paris today.');
    const calls = eventsOf(rec, 'llm_call');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ provider: 'openai', model: 'gpt-test', tokens: { prompt_tokens: 42, completion_tokens: 11, total_tokens: 53 } });
    expect(typeof calls[0].latency_ms).toBe('number');
    expect(rec.outcome!.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What is the weather in Paris?'],
      ['assistant', 'It is sunny and 21 degrees in Paris today.'],
    ]);
  });

  it('runs a tool call and gives its result back to the model', async () => {
    const rt = makeRuntime();
    const seen: unknown[] = [];
    rt.tools.register('custom_function', testToolProvider({ get_weather: { run: (a) => (seen.push(a), { forecast: 'rain', city: a.city }) } }));
    llm.reply(
      { toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }], usage: { prompt_tokens: 20, completion_tokens: 7 } },
      { text: 'Rain is expected in Paris.', usage: { prompt_tokens: 30, completion_tokens: 6 } },
    );
    const agent = openaiAgent(llm.baseUrl, { graph: [{ item_id: 'get_weather', type: 'tool', sub_type: 'test', targets: [] }] });
    const rec = await runOnce(rt, { agent });

    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'Rain is expected in Paris.', tokens: { prompt_tokens: 50, completion_tokens: 13, total_tokens: 63 } });
    expect(seen).toEqual([{ city: 'Paris' }]);
    expect(llm.requests[0].tools).toEqual(['get_weather']);
    const toolMsg = llm.requests[1].body.messages.find((m: any) => m.role === 'tool');
    expect(toolMsg).toMatchObject({ tool_call_id: 'call_1' });
    expect(JSON.parse(toolMsg.content)).toEqual({ forecast: 'rain', city: 'Paris' });

    expect(eventsOf(rec, 'tool_call_request')).toEqual([
      { tool_call_id: 'call_1', tool_name: 'get_weather', graph_item_id: 'get_weather', payload: { city: 'Paris' } },
    ]);
    const [result] = eventsOf(rec, 'tool_call_result');
    expect(result).toMatchObject({ tool_call_id: 'call_1', payload: { city: 'Paris' }, result: { forecast: 'rain', city: 'Paris' }, is_error: false });
    expect(typeof result.duration_ms).toBe('number');
    expect(eventsOf(rec, 'llm_call')).toHaveLength(2);
    expect(rec.outcome!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(rec.outcome!.messages[1].tool_calls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }]);
  });

  it('returns tool failures and invalid arguments to the model instead of failing the run', async () => {
    const rt = makeRuntime();
    rt.tools.register('custom_function', testToolProvider({ get_weather: { run: () => { throw new Error('weather service down'); } } }));
    llm.reply(
      { toolCalls: [{ name: 'get_weather', arguments: { town: 'Paris' } }, { name: 'no_such_tool', arguments: {} }] },
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
      { text: 'Sorry, the weather service is down.' },
    );
    const agent = openaiAgent(llm.baseUrl, { graph: [{ item_id: 'get_weather', type: 'tool', sub_type: 'test', targets: [] }] });
    const rec = await runOnce(rt, { agent });
    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'Sorry, the weather service is down.' });
    const results = eventsOf(rec, 'tool_call_result');
    expect(results.map((r) => r.is_error)).toEqual([true, true, true]);
    expect(String(results[0].result)).toContain('city');
    expect(String(results[1].result)).toContain('no tool named "no_such_tool"');
    expect(results[2].result).toBe('weather service down');
    const toolMsgs = llm.requests[2].body.messages.filter((m: any) => m.role === 'tool');
    expect(toolMsgs.at(-1).content).toContain('weather service down');
    // Every call is answered exactly once, the unknown tool's too (providers refuse duplicate results).
    const answered = toolMsgs.map((m: any) => m.tool_call_id);
    expect(answered).toHaveLength(3);
    expect(new Set(answered).size).toBe(3);
  });

  it('stops offering tools at tool_call_limit and asks for the final answer', async () => {
    const rt = makeRuntime();
    let runs = 0;
    rt.tools.register('custom_function', testToolProvider({ get_weather: { run: () => ++runs } }));
    llm.reply(
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_weather', arguments: { city: 'Lyon' } }] },
      { text: 'Done with one lookup.' },
    );
    const agent = openaiAgent(llm.baseUrl, {
      agno_settings: { tool_call_limit: 1 },
      graph: [{ item_id: 'get_weather', type: 'tool', sub_type: 'test', targets: [] }],
    });
    const rec = await runOnce(rt, { agent });
    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'Done with one lookup.' });
    expect(runs).toBe(1);
    expect(eventsOf(rec, 'tool_call_result').map((r) => r.is_error)).toEqual([false, true]);
    expect(llm.requests[1].body.tool_choice).toBe('none');
    expect(llm.requests[1].system).toContain('No more tool calls');
  });

  it('bounds LLM calls by iterative_strategy.max_iterations, the last one without tools', async () => {
    const rt = makeRuntime();
    let runs = 0;
    rt.tools.register('custom_function', testToolProvider({ get_weather: { run: () => ++runs } }));
    llm.handle((req) => (req.body.tool_choice === 'none' ? { text: 'Final answer.' } : { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }));
    const agent = openaiAgent(llm.baseUrl, {
      task_level_strategies: { iterative_strategy: { max_iterations: 3 } },
      graph: [{ item_id: 'get_weather', type: 'tool', sub_type: 'test', targets: [] }],
    });
    const rec = await runOnce(rt, { agent });
    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'Final answer.' });
    expect(llm.requests.map((r) => r.body.tool_choice)).toEqual(['auto', 'auto', 'none']);
    expect(runs).toBe(2);
  });

  it('asks a person before a mutating tool call of a supervised agent', async () => {
    const rt = makeRuntime();
    let sent = 0;
    rt.tools.register('custom_function', testToolProvider({ send_alert: { mutating: true, run: () => ++sent } }));
    llm.reply({ toolCalls: [{ name: 'send_alert', arguments: { city: 'Paris' } }] }, { text: 'The alert was not sent.' });
    const agent = openaiAgent(llm.baseUrl, { is_supervised: true, graph: [{ item_id: 'send_alert', type: 'tool', sub_type: 'test', targets: [] }] });
    const rec = await runOnce(rt, { agent, approve: false });
    expect(rec.approvals).toEqual([{ tool: 'send_alert', arguments: { city: 'Paris' } }]);
    expect(sent).toBe(0);
    expect(eventsOf(rec, 'tool_call_result')[0]).toMatchObject({ is_error: true });
    expect(rec.outcome!.status).toBe('completed');
  });

  it('produces JSON that validates against output_schema, correcting an invalid answer', async () => {
    const rt = makeRuntime();
    const schema = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] };
    llm.reply({ text: '{"city": "Paris"}' }, { text: '```json\n{"city": "Paris", "celsius": 21}\n```' });
    const rec = await runOnce(rt, {
      agent: openaiAgent(llm.baseUrl),
      task: makeTask({ output_format: 'json', output_schema: schema }),
    });
    expect(rec.outcome!.status).toBe('completed');
    expect(JSON.parse(rec.outcome!.result)).toEqual({ city: 'Paris', celsius: 21 });
    expect(llm.requests[0].system).toContain(JSON.stringify(schema));
    expect(llm.requests[1].lastUserText).toContain('celsius');
  });

  it('fails a json task whose answer never validates', async () => {
    const rt = makeRuntime();
    llm.reply({ text: 'sunny' }, { text: 'still sunny' }, { text: 'really sunny' });
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { output_format: 'json' }) });
    expect(rec.outcome!.status).toBe('failed');
    expect(rec.outcome!.result).toContain('not valid JSON');
    expect(llm.requests).toHaveLength(3);
  });

  it('sends the earlier runs of the conversation, bounded by num_history_runs', async () => {
    const rt = makeRuntime();
    const at = new Date().toISOString();
    const history = [1, 2, 3].flatMap((run) => [
      { role: 'user' as const, content: `question ${run}`, created_at: at, run },
      { role: 'assistant' as const, content: '', tool_calls: [{ id: `c${run}`, name: 'x', arguments: {} }], created_at: at, run },
      { role: 'tool' as const, content: 'tool output', tool_call_id: `c${run}`, created_at: at, run },
      { role: 'assistant' as const, content: `answer ${run}`, created_at: at, run },
    ]);
    llm.reply({ text: 'answer 4' });
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl, { agno_settings: { num_history_runs: 2 } }), history, task: makeTask({ input: { text: 'question 4', files: [], user: null } }) });
    const sent = llm.requests[0].body.messages.filter((m: any) => m.role !== 'system').map((m: any) => [m.role, m.content]);
    expect(sent).toEqual([
      ['user', 'question 2'],
      ['assistant', 'answer 2'],
      ['user', 'question 3'],
      ['assistant', 'answer 3'],
      ['user', 'question 4'],
    ]);
    expect(rec.outcome!.messages.every((m) => m.run === 4)).toBe(true);
  });

  it('gives the model none of the earlier runs when session_storage is false', async () => {
    const rt = makeRuntime();
    const at = new Date().toISOString();
    const history = [
      { role: 'user' as const, content: 'my name is Ada', created_at: at, run: 1 },
      { role: 'assistant' as const, content: 'noted', created_at: at, run: 1 },
    ];
    llm.reply({ text: 'I do not know' });
    const agent = openaiAgent(llm.baseUrl, { agno_settings: { num_history_runs: 10, session_storage: false } });
    await runOnce(rt, { agent, history, task: makeTask({ input: { text: 'what is my name?', files: [], user: null } }) });
    const sent = llm.requests[0].body.messages.filter((m: any) => m.role !== 'system').map((m: any) => [m.role, m.content]);
    expect(sent).toEqual([['user', 'what is my name?']]);
  });

  it('injects attached files unless disabled, and always lists their URLs', async () => {
    const rt = makeRuntime();
    const files = [{ id: 'f1', name: 'report.txt', mime_type: 'text/plain', size: 20, url: 'http://files/f1?sig=x', text: 'Quarterly revenue: 42' }];
    const task = makeTask({ input: { text: 'Summarize the report', files, user: null } });
    llm.reply({ text: 'Revenue was 42.' }, { text: 'I cannot see the content.' });
    await runOnce(rt, { agent: openaiAgent(llm.baseUrl), task });
    await runOnce(rt, { agent: openaiAgent(llm.baseUrl), task, extras: { disableAttachmentInjection: true } });
    expect(llm.requests[0].lastUserText).toContain('Quarterly revenue: 42');
    expect(llm.requests[0].lastUserText).toContain('http://files/f1?sig=x');
    expect(llm.requests[1].lastUserText).not.toContain('Quarterly revenue: 42');
    expect(llm.requests[1].lastUserText).toContain('http://files/f1?sig=x');
  });

  it('replaces the instructions and expected output for one run', async () => {
    const rt = makeRuntime();
    llm.reply({ text: 'ok' });
    await runOnce(rt, { agent: openaiAgent(llm.baseUrl), extras: { instructionsOverride: 'Answer like a pirate.', expectedOutput: 'A haiku.' } });
    expect(llm.requests[0].system).toContain('Answer like a pirate.');
    expect(llm.requests[0].system).toContain('A haiku.');
    expect(llm.requests[0].system).not.toContain('You are a meteorologist');
  });

  it('retries a 429 as Retry-After says, then completes, and logs the retry with its task id', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const rt = makeRuntime({ log });
    llm.reply({ status: 429, error: 'Rate limit reached', headers: { 'retry-after': '0' } }, { text: 'After the wait.' });
    const task = makeTask();
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl), task });
    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'After the wait.' });
    expect(llm.requests).toHaveLength(2);
    // The model is shared between runs; the retry is still reported as this run's.
    expect(lines.filter((l) => l.msg === 'LLM call retried')).toEqual([expect.objectContaining({ task_id: task.id, status: 429, attempt: 1 })]);
  });

  it('ends with error naming the provider when it keeps failing', async () => {
    const rt = makeRuntime();
    llm.reply(...[1, 2, 3].map(() => ({ status: 500, error: 'The server had an error while processing your request' })));
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(rec.outcome!.status).toBe('error');
    expect(rec.outcome!.result).toContain('"openai"');
    expect(rec.outcome!.result).toContain('HTTP 500');
    expect(rec.outcome!.result).toContain('The server had an error while processing your request');
    expect(llm.requests).toHaveLength(3); // the first attempt and two retries
    expect(eventsOf(rec, 'llm_call')[0]).toMatchObject({ finish_reason: 'error' });
  });

  it('does not retry a client error', async () => {
    const rt = makeRuntime();
    llm.reply({ status: 401, error: 'Incorrect API key provided' });
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(rec.outcome).toMatchObject({ status: 'error' });
    expect(rec.outcome!.result).toContain('Incorrect API key provided');
    expect(llm.requests).toHaveLength(1);
  });

  it('aborts on the signal and reports what the run consumed', async () => {
    const rt = makeRuntime();
    llm.reply({ text: 'too late', delayMs: 10_000 });
    const ac = new AbortController();
    const pending = runOnce(rt, { agent: openaiAgent(llm.baseUrl), signal: ac.signal });
    await llm.waitForRequests(1);
    ac.abort(new Error('stopped by user'));
    const rec = await pending;
    expect(rec.error).toBeInstanceOf(RunAbortedError);
    expect((rec.error as RunAbortedError).messages[0]).toMatchObject({ role: 'user' });
  });

  it('refuses a private llm_api_base unless the egress policy allows it', async () => {
    const rt = makeRuntime({ env: { AGENTRY_EGRESS_ALLOW: '' } });
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(rec.outcome!.status).toBe('error');
    expect(rec.outcome!.result).toContain('refused');
    expect(llm.requests).toHaveLength(0);
  });
});
