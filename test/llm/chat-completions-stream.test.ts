import type { LanguageModelV3, LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partReaderOf, withDirectChatStream } from '../../src/llm/chat-completions-stream.js';
import { createEgressPolicy, createSafeFetch } from '../../src/net/safe-fetch.js';

/**
 * The direct Chat Completions stream against the SDK's own model: both are given the very same bytes by a scripted
 * server on 127.0.0.1 (sent in small pieces, so lines, JSON and UTF-8 characters are cut across reads) and must
 * produce the same stream parts, the same errors and the same request. An SDK upgrade that changes its parts fails
 * here rather than in production.
 */

interface Script {
  status?: number;
  contentType?: string;
  /** The response body, sent in pieces of `piece` bytes with a pause between them. */
  body: string;
  piece?: number;
  /** Drop the connection after this many bytes of the body. */
  cutAfter?: number;
}

interface Recorded {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

let server: Server;
let base: string;
let script: Script;
const requests: Recorded[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      requests.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(raw) });
      const bytes = Buffer.from(script.body);
      res.writeHead(script.status ?? 200, { 'content-type': script.contentType ?? 'text/event-stream', 'x-request-id': 'req-1' });
      const piece = script.piece ?? 7;
      const end = script.cutAfter ?? bytes.length;
      for (let i = 0; i < end; i += piece) {
        res.write(bytes.subarray(i, Math.min(i + piece, end)));
        await new Promise((r) => setTimeout(r, 1));
      }
      if (script.cutAfter !== undefined) res.socket?.destroy();
      else res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

const safeFetch = createSafeFetch(createEgressPolicy(['127.0.0.1'])) as typeof globalThis.fetch;
/**
 * The transport of the direct model: safe-fetch hands a successful body over as its Node stream (NODE_BODY), undici's
 * fetch (the providers' public endpoints) as a web stream. Every test runs on both.
 */
let fetch = safeFetch;

function models(): { sdk: LanguageModelV3; direct: LanguageModelV3 } {
  const options = { name: 'acme', baseURL: base, apiKey: 'sk-test', headers: { 'x-extra': 'yes' }, fetch, includeUsage: true };
  const sdk = createOpenAICompatible(options).chatModel('m-1') as LanguageModelV3;
  // A second SDK model: the direct one must not depend on the reference's state.
  const inner = createOpenAICompatible(options).chatModel('m-1') as LanguageModelV3;
  const direct = withDirectChatStream(inner, { providerName: 'acme', baseURL: base, headers: { Authorization: 'Bearer sk-test', 'x-extra': 'yes' }, fetch });
  return { sdk, direct };
}

const CALL: LanguageModelV3CallOptions = {
  prompt: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Köln?' }] },
  ],
  tools: [
    { type: 'function', name: 'get_weather', description: 'Weather of a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
  ],
  toolChoice: { type: 'auto' },
  includeRawChunks: false,
};

/** Every part (or the read's rejection) as comparable data: errors by name and message, generated ids in order. */
async function collect(model: LanguageModelV3, call: LanguageModelV3CallOptions = CALL, via: 'reader' | 'stream' = 'reader'): Promise<unknown[]> {
  const out: unknown[] = [];
  let result;
  try {
    result = await model.doStream(call);
  } catch (e) {
    return [{ thrown: describe_(e) }];
  }
  // The runtime reads parts with partReaderOf (model-stream.ts); `stream` is what any other reader of the SDK uses.
  const reader = via === 'reader' ? partReaderOf(result) : result.stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out.push(value);
    }
  } catch (e) {
    out.push({ rejected: describe_(e) });
  }
  const ids = new Map<string, string>();
  const idOf = (id: string) => ids.get(id) ?? (ids.set(id, `id${ids.size + 1}`), `id${ids.size}`);
  return JSON.parse(
    JSON.stringify(out, (key, value) => {
      if (value instanceof Error) return describe_(value);
      if ((key === 'id' || key === 'toolCallId') && typeof value === 'string') return idOf(value);
      return value;
    }),
  );
}

function describe_(e: unknown): unknown {
  if (!(e instanceof Error)) return e;
  const x = e as Error & { statusCode?: number; isRetryable?: boolean; responseBody?: string };
  // A chunk of the wrong shape: zod's list of failing paths is replaced by a sentence (the value is still shown).
  const message = x.name === 'AI_TypeValidationError' ? x.message.replace(/Error message: [\s\S]*$/, 'Error message: …') : x.message;
  return { name: x.name, message, statusCode: x.statusCode, isRetryable: x.isRetryable, responseBody: x.responseBody };
}

const sse = (...events: unknown[]) => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
const chunk = (delta: unknown, finish: string | null = null, extra: object = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1_760_000_000,
  model: 'm-1',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});
const usage = { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52, prompt_tokens_details: { cached_tokens: 30 }, completion_tokens_details: { reasoning_tokens: 4 } };

/** Runs the script through both models; returns the direct model's parts after requiring the SDK's. */
async function same(s: Script, call: LanguageModelV3CallOptions = CALL, via: 'reader' | 'stream' = 'reader'): Promise<any[]> {
  const { sdk, direct } = models();
  script = s;
  requests.length = 0;
  const expected = await collect(sdk, call, 'stream');
  const actual = await collect(direct, call, via);
  expect(actual).toEqual(expected);
  // The same request: path, body and headers (the user agent names the provider-utils version each side links).
  const [a, b] = requests;
  expect(b.path).toBe(a.path);
  expect(b.body).toEqual(a.body);
  const { 'user-agent': uaA, ...headersA } = a.headers;
  const { 'user-agent': uaB, ...headersB } = b.headers;
  expect({ ...headersB, 'content-length': undefined }).toEqual({ ...headersA, 'content-length': undefined });
  expect(uaB).toContain('ai-sdk/openai-compatible/');
  expect(uaA).toContain('ai-sdk/openai-compatible/');
  return actual as any[];
}

describe.each([
  ['safe-fetch, the body as a Node stream', () => safeFetch],
  ["undici's fetch, the body as a web stream", () => globalThis.fetch],
])('direct Chat Completions stream, part for part against the SDK (%s)', (_transport, transport) => {
  beforeAll(() => {
    fetch = transport();
  });

  it('streams text cut across reads (lines, JSON and a two-byte character), with usage and metadata', async () => {
    const parts = await same({
      body: sse(chunk({ role: 'assistant', content: '' }), chunk({ content: 'Il fait ' }), chunk({ content: 'beau à Köln.' }), chunk({}, 'stop'), { ...chunk({}), choices: [], usage }, '[DONE]'),
      piece: 5,
    });
    expect(parts.map((p) => p.type)).toEqual(['stream-start', 'response-metadata', 'text-start', 'text-delta', 'text-delta', 'text-end', 'finish']);
    expect(parts.filter((p) => p.type === 'text-delta').map((p) => p.delta).join('')).toBe('Il fait beau à Köln.');
    expect(parts.at(-1)).toMatchObject({ finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 40, cacheRead: 30 }, outputTokens: { total: 12, reasoning: 4 } } });
  });

  it('accepts CRLF line ends, comments, event names, multi-line data and a byte-order mark', async () => {
    const first = JSON.stringify(chunk({ content: 'a' }));
    const body =
      '\uFEFF: keep-alive\r\n\r\n' +
      `event: message\r\ndata: ${first.slice(0, 20)}\r\ndata: ${first.slice(20)}\r\n\r\n` +
      `data: ${JSON.stringify(chunk({ content: 'b' }, 'stop'))}\r\n\r\n` +
      'data: [DONE]\r\n\r\n';
    const parts = await same({ body, piece: 3 });
    // The JSON split over two data lines is joined with a newline, which JSON allows between tokens only: here it
    // falls inside a string or not depending on the cut, and both models must agree either way.
    expect(parts.some((p) => p.type === 'finish')).toBe(true);
  });

  it('assembles parallel tool calls whose arguments arrive in pieces, one of them without an id', async () => {
    const parts = await same({
      body: sse(
        chunk({ role: 'assistant', content: null }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({ tool_calls: [{ index: 1, type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: 'ty":"Köln"}' } }] }),
        chunk({}, 'tool_calls'),
        { ...chunk({}), choices: [], usage },
        '[DONE]',
      ),
    });
    const calls = parts.filter((p) => p.type === 'tool-call');
    expect(calls.map((c) => [c.toolName, JSON.parse(c.input).city])).toEqual([
      ['get_weather', 'Paris'],
      ['get_weather', 'Köln'],
    ]);
    expect(parts.at(-1).finishReason.unified).toBe('tool-calls');
  });

  it('buffers arguments sent before the tool name', async () => {
    await same({
      body: sse(
        chunk({ tool_calls: [{ index: 0, id: 'call_x', function: { arguments: '{"city":"Lyon"}' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather' } }] }),
        chunk({}, 'tool_calls'),
        '[DONE]',
      ),
    });
  });

  it('turns reasoning (reasoning_content, reasoning and thinking parts) into reasoning parts before the answer', async () => {
    const parts = await same({
      body: sse(
        chunk({ reasoning_content: 'Think ' }),
        chunk({ reasoning: 'more.' }),
        chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: ' Deeper.' }] }, { type: 'text', text: 'Answer' }] }),
        chunk({ content: '!' }, 'stop'),
        '[DONE]',
      ),
    });
    expect(parts.map((p) => p.type)).toContain('reasoning-end');
  });

  it('reports a refusal as text with a content-filter finish, and ignores a refusal that is not text', async () => {
    const parts = await same({ body: sse(chunk({ refusal: false, content: '' }), chunk({ refusal: 'I cannot help with that.' }), chunk({}, 'stop'), '[DONE]') });
    expect(parts.at(-1).finishReason.unified).toBe('content-filter');
  });

  it('passes an error chunk, bad JSON and a chunk of the wrong shape on as error parts', async () => {
    const parts = await same({
      body: sse(
        chunk({ content: 'Hi' }),
        { error: { message: 'The server is overloaded', type: 'server_error', code: 503, extra: 'dropped' } },
        '{"not json',
        { choices: 'nope' },
        chunk({ content: '!' }, 'stop'),
        '[DONE]',
      ),
    });
    expect(parts.filter((p) => p.type === 'error')).toHaveLength(3);
  });

  it('ends with an error part when the stream stops without a finish reason', async () => {
    const parts = await same({ body: sse(chunk({ content: 'Half an ans' })) });
    expect(parts.at(-2)).toMatchObject({ type: 'error', error: { name: 'AI_InvalidResponseDataError' } });
  });

  it('rejects the read with the same error when the connection drops mid-answer', async () => {
    const body = sse(chunk({ content: 'Hello' }), chunk({ content: ' world' }, 'stop'), '[DONE]');
    const parts = await same({ body, cutAfter: 150 });
    expect(parts.at(-1)).toHaveProperty('rejected');
  });

  it.each([
    ['a JSON error body', 429, JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_exceeded', code: null } })],
    ['a text error body', 502, 'Bad gateway'],
    ['an empty error body', 500, ''],
  ])('throws the same APICallError for %s', async (_what, status, body) => {
    const parts = await same({ status, body, contentType: 'application/json' });
    expect(parts).toEqual([{ thrown: expect.objectContaining({ name: 'AI_APICallError', statusCode: status }) }]);
  });

  it('throws the same error for a successful status without a body', async () => {
    const parts = await same({ status: 204, body: '' });
    expect(parts).toEqual([{ thrown: expect.objectContaining({ name: 'AI_APICallError', message: 'Failed to process successful response' }) }]);
  });

  it('throws the same retryable error when the endpoint refuses the connection', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const saved = base;
    base = `http://127.0.0.1:${port}/v1`;
    try {
      const { sdk, direct } = models();
      const expected = await collect(sdk);
      expect(expected).toEqual([{ thrown: expect.objectContaining({ name: 'AI_APICallError', isRetryable: true }) }]);
      expect(await collect(direct)).toEqual(expected);
    } finally {
      base = saved;
    }
  });

  it('leaves calls with options it does not translate to the SDK model', async () => {
    const call = { ...CALL, temperature: 0.2, maxOutputTokens: 50 };
    await same({ body: sse(chunk({ content: 'ok' }, 'stop'), '[DONE]') }, call);
    expect(requests[1].body).toMatchObject({ temperature: 0.2, max_tokens: 50 });
  });

  it("gives the same parts through the result's stream, which can then not be read a second way", async () => {
    const body = sse(chunk({ content: 'Hello' }), chunk({ content: ' world' }, 'stop'), '[DONE]');
    const viaStream = await same({ body }, CALL, 'stream');
    expect(viaStream.filter((p) => p.type === 'text-delta').map((p) => p.delta)).toEqual(['Hello', ' world']);
    const { direct } = models();
    const result = await direct.doStream(CALL);
    result.stream.getReader();
    expect(() => partReaderOf(result)).toThrow(/already been read/);
  });

  it('stops reading when the call is aborted', async () => {
    const { direct } = models();
    script = { body: sse(...Array.from({ length: 200 }, () => chunk({ content: 'word ' })), chunk({}, 'stop'), '[DONE]'), piece: 64 };
    const abort = new AbortController();
    const reader = partReaderOf(await direct.doStream({ ...CALL, abortSignal: abort.signal }));
    await reader.read();
    abort.abort(new Error('stopped by the test'));
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return 'ended';
      })(),
    ).rejects.toThrow();
  });
});
