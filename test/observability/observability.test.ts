import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Logger } from '../../src/lib/logger.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { createTestEnv, TEST_DBS, type TestEnv } from '../support/harness.js';

/**
 * Observability end to end on a real server: an agent with a custom-function tool runs against the scripted model;
 * then /metrics shows the run, the OTLP/HTTP receiver below has its spans, the trace has the LLM input and output,
 * and the log has the run's one line.
 */

interface OtlpSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number; arrayValue?: unknown } }[];
}

/** An OTLP/HTTP collector: records the JSON bodies POSTed to /v1/traces and answers 200 as collectors do. */
async function startOtlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; contentTypes: string[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        contentTypes.push(String(req.headers['content-type']));
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, spans, contentTypes, close: () => new Promise((r) => server.close(() => r())) };
}

function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v;
}

async function until<T>(what: string, f: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(TEST_DBS)('metrics, OpenTelemetry export, LLM input in the trace, run log line (%s)', (kind) => {
  let env: TestEnv;
  let llm: ScriptedLlmServer;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let server: RunningServer;
  let key = '';
  const logLines: Record<string, unknown>[] = [];
  let api = '';
  let agentId = '';
  let taskId = '';

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${api}${path}`, { method, headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });

  beforeAll(async () => {
    llm = await startOpenAIServer();
    otlp = await startOtlpReceiver();
    env = await createTestEnv(kind, {
      AGENTRY_EGRESS_ALLOW: '127.0.0.1',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      AGENTRY_METRICS_TOKEN: 'metrics-token-0123456789',
    });
    const config = loadConfig({ ...env.env, AGENTRY_API_PORT: '0', AGENTRY_WEBHOOK_PORT: '0' });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line) logLines.push(JSON.parse(line));
        done();
      },
    });
    const log = pino({ level: 'info' }, sink) as unknown as Logger;
    server = await startServer(config, await createContainer(config, { log }));
    api = server.apiUrl!;
    key = (await server.container.orgs.createApiKey('org-obs', 'test')).key;
    const f = await (
      await call('POST', '/v1/custom_functions', {
        name: 'word_count',
        description: 'Counts the words of a text',
        code: 'async function run({ text }) { return { words: text.split(/\\s+/).filter(Boolean).length }; }',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      })
    ).json();
    const agent = await (
      await call('POST', '/v1/agents', {
        name: 'Counter',
        model_provider: 'openai',
        model_name: 'gpt-4.1',
        llm_api_base: llm.baseUrl,
        llm_credentials: { name: 'key', value: 'sk-test-secret-value' },
        output_format: 'text',
        should_stage_before_publish: false,
        tools: [{ type: 'custom_function', custom_function_id: f.id }],
      })
    ).json();
    agentId = agent.id;
    llm.reply({ toolCalls: [{ name: 'word_count', arguments: { text: 'one two three' } }] }, { text: 'Three words.' });
    const task = await (await call('POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'How many words in "one two three"?' } })).json();
    expect(task).toMatchObject({ status: 'completed', result: 'Three words.' });
    taskId = task.id;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await env?.cleanup();
    await llm?.close();
    await otlp?.close();
  });

  it('serves the run, the LLM calls, the tool call, the routes and the queue in Prometheus format, behind the token', async () => {
    expect((await fetch(`${api}/metrics`)).status).toBe(401);
    expect((await fetch(`${api}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    // A webhook call answered by the fast lane (refused: no agent, no credentials) counts as a delivery.
    const wh = await fetch(`${server.webhookUrl}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"hi"}' });
    expect(wh.status).toBeGreaterThanOrEqual(400);

    const r = await fetch(`${api}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await r.text();
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    expect(value(`agentry_tasks_finished_total{agent_id="${agentId}",status="completed"}`)).toBe(1);
    expect(value('agentry_llm_calls_total{provider="openai",model="gpt-4.1",outcome="ok"}')).toBe(2);
    // The scripted model reports 10 prompt + 5 completion tokens a call.
    expect(value('agentry_llm_tokens_total{provider="openai",model="gpt-4.1",type="input"}')).toBe(20);
    expect(value('agentry_llm_tokens_total{provider="openai",model="gpt-4.1",type="output"}')).toBe(10);
    expect(value('agentry_tool_calls_total{outcome="ok"}')).toBe(1);
    expect(value('agentry_http_request_duration_seconds_count{listener="api",method="POST",route="/v1/agents/:agent_id/invoke",status="200"}')).toBe(1);
    expect(value(`agentry_http_request_duration_seconds_count{listener="webhooks",method="POST",route="/",status="${wh.status}"}`)).toBe(1);
    expect(value(`agentry_webhook_calls_total{form="key",status="${wh.status}"}`)).toBe(1);
    expect(value('agentry_tasks{status="pending"}')).toBe(0);
    expect(value('agentry_task_inbox_depth')).toBe(0);
    expect(value('agentry_task_queue_oldest_age_seconds')).toBe(0);
    if (kind === 'postgres') expect(value('agentry_db_pool_connections{state="total"}')).toBeGreaterThan(0);
    else expect(text).not.toContain('agentry_db_pool_connections{');
    // Raw URLs never become labels: the task id appears nowhere.
    expect(text).not.toContain(taskId);
  });

  it('stores each LLM call input and output in the trace, without the credential', async () => {
    const events = (await (await call('GET', `/v1/tasks/${taskId}/events`)).json()) as { type: string; data: any }[];
    const calls = events.filter((e) => e.type === 'llm_call').map((e) => e.data);
    expect(calls).toHaveLength(2);
    expect(calls[0].input.system).toContain('Counter');
    expect(calls[0].input.messages).toEqual([{ role: 'user', content: 'How many words in "one two three"?' }]);
    expect(calls[0].output).toEqual({ text: '', tool_calls: [{ name: 'word_count', arguments: '{"text":"one two three"}' }], truncated: false });
    // The second call was sent the tool call and its result.
    expect(calls[1].input.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(calls[1].input.messages[2].content).toContain('{"words":3}');
    expect(calls[1].output).toMatchObject({ text: 'Three words.', tool_calls: [] });
    expect(JSON.stringify(events)).not.toContain('sk-test-secret-value');
  });

  it('exports a span per task, LLM call and tool call over OTLP/HTTP, with GenAI attributes', async () => {
    const spans = await until('the exported spans', () => (otlp.spans.length >= 4 ? otlp.spans : undefined));
    expect(otlp.contentTypes[0]).toBe('application/json');
    const task = spans.find((s) => attr(s, 'gen_ai.operation.name') === 'invoke_agent')!;
    expect(task.name).toBe('invoke_agent Counter');
    expect(attr(task, 'gen_ai.agent.id')).toBe(agentId);
    expect(attr(task, 'agentry.task.id')).toBe(taskId);
    expect(attr(task, 'gen_ai.usage.input_tokens')).toBe(20);
    expect(attr(task, 'gen_ai.usage.output_tokens')).toBe(10);
    const chats = spans.filter((s) => attr(s, 'gen_ai.operation.name') === 'chat');
    expect(chats).toHaveLength(2);
    for (const c of chats) {
      expect(c).toMatchObject({ name: 'chat gpt-4.1', traceId: task.traceId, parentSpanId: task.spanId });
      expect(attr(c, 'gen_ai.provider.name')).toBe('openai');
      expect(attr(c, 'gen_ai.request.model')).toBe('gpt-4.1');
      expect(attr(c, 'gen_ai.usage.input_tokens')).toBe(10);
    }
    expect(JSON.parse(attr(chats[0]!, 'gen_ai.input.messages') as string)).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'How many words in "one two three"?' }] }]);
    const tool = spans.find((s) => attr(s, 'gen_ai.operation.name') === 'execute_tool')!;
    expect(tool).toMatchObject({ name: 'execute_tool word_count', traceId: task.traceId, parentSpanId: task.spanId });
    expect(attr(tool, 'gen_ai.tool.name')).toBe('word_count');
  });

  it('writes one info line when a run ends', () => {
    const lines = logLines.filter((l) => l.msg === 'task run ended');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, task_id: taskId, agent_id: agentId, status: 'completed', tokens: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 }, llm_model_provider: 'openai' });
    expect(typeof lines[0]!.duration_ms).toBe('number');
    expect(logLines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('console at '))).toBe(true);
  });
});
