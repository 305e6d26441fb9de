/**
 * A scripted OpenAI-compatible server (Chat Completions, streaming and not, tool calls, usage) on 127.0.0.1.
 *
 *   const llm = await startOpenAIServer();
 *   // agent: { model_provider: 'openai', model_name: 'gpt-test', llm_api_base: llm.baseUrl, llm_credentials: {...} }
 *   llm.reply({ text: 'Hello!' });                                                    // one answer
 *   llm.reply({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }, // then a tool call ...
 *             { text: 'It is sunny in Paris.' });                                     // ... and the answer after it
 *   llm.reply({ status: 429, headers: { 'retry-after': '0' }, error: 'slow down' });  // a provider error
 *   llm.reply({ stallAfterHeaders: true });  llm.reply({ endless: { everyMs: 10 } });  // an answer that never ends
 *   llm.handle((req) => ({ text: `you said: ${req.lastUserText}` }));                // when the queue is empty
 *   llm.requests[0].body.messages;   // what reached the model (also .system, .tools, .lastUserText, .headers)
 *   await llm.close();
 *
 * Moderation (POST /v1/moderations, what openai_moderation_enabled calls): every call is recorded in
 * `llm.moderations` (body, headers) and answered per input by `llm.moderate(fn)`: `fn(text)` returns the categories to
 * flag (`[]` for a clean input); by default nothing is flagged. `llm.moderate(() => ({ status: 500 }))` fails calls.
 *
 * Replies are consumed one per request, in order; with the queue empty and no handler the server answers 500
 * "no scripted reply", so a test that makes an unexpected call fails visibly. Usage defaults to 10 + 5 tokens.
 * Streamed answers send usage only when the request asks for it (stream_options.include_usage), as OpenAI does.
 */
import {
  type SideRoute,
  argumentsText,
  chunksOf,
  DEFAULT_USAGE,
  startScriptedServer,
  type Protocol,
  type ScriptedLlmServer,
  type ScriptedReply,
} from './scripted-llm.js';

export type { RecordedRequest, ScriptedLlmServer, ScriptedReply } from './scripted-llm.js';

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
  return '';
}

function usageOf(reply: ScriptedReply) {
  const prompt = reply.usage?.prompt_tokens ?? DEFAULT_USAGE.prompt_tokens;
  const completion = reply.usage?.completion_tokens ?? DEFAULT_USAGE.completion_tokens;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function finishOf(reply: ScriptedReply): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
}

const openai: Protocol = {
  matches: (method, path) => method === 'POST' && /\/chat\/completions$/.test(path),
  describe(body) {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    const users = messages.filter((m) => m.role === 'user');
    return {
      stream: body.stream === true,
      tools: Array.isArray(body.tools) ? body.tools.map((t: any) => t.function?.name) : [],
      system: messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => contentText(m.content)).join('\n'),
      lastUserText: users.length ? contentText(users[users.length - 1].content) : '',
    };
  },
  errorBody: (status, message) => ({ error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } }),
  json(reply, body, ids) {
    const toolCalls = (reply.toolCalls ?? []).map((c) => ({
      id: c.id ?? `call_${ids()}`,
      type: 'function',
      function: { name: c.name, arguments: argumentsText(c.arguments) },
    }));
    return {
      id: `chatcmpl-${ids()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: reply.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
          finish_reason: finishOf(reply),
        },
      ],
      usage: usageOf(reply),
    };
  },
  stream(reply, body, ids, write) {
    const id = `chatcmpl-${ids()}`;
    const base = { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model };
    const chunk = (delta: unknown, finish: string | null = null) => write(null, { ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    chunk({ role: 'assistant', content: '' });
    for (const piece of chunksOf(reply.text ?? '')) chunk({ content: piece });
    (reply.toolCalls ?? []).forEach((c, index) => {
      chunk({ tool_calls: [{ index, id: c.id ?? `call_${ids()}`, type: 'function', function: { name: c.name, arguments: '' } }] });
      chunk({ tool_calls: [{ index, function: { arguments: argumentsText(c.arguments) } }] });
    });
    chunk({}, finishOf(reply));
    if (body.stream_options?.include_usage) write(null, { ...base, choices: [], usage: usageOf(reply) });
    write(null, '[DONE]');
  },
  textDelta: (text, body) => ({ id: 'chatcmpl-endless', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }),
};

/** The categories omni-moderation reports, all present in every result as OpenAI does. */
export const MODERATION_CATEGORIES = [
  'harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm',
  'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
];

export type ModerationScript = (text: string) => string[] | { status: number };

export interface OpenAIServer extends ScriptedLlmServer {
  moderations: { body: any; headers: Record<string, string | string[] | undefined> }[];
  /** How moderation answers each input; null restores the default (nothing flagged). */
  moderate(script: ModerationScript | null): void;
}

export async function startOpenAIServer(): Promise<OpenAIServer> {
  const moderations: OpenAIServer['moderations'] = [];
  let script: ModerationScript = () => [];
  const moderation: SideRoute = {
    matches: (method, path) => method === 'POST' && /\/moderations$/.test(path),
    answer(body, headers) {
      moderations.push({ body, headers });
      const inputs: unknown[] = Array.isArray(body.input) ? body.input : [body.input];
      const results = [];
      for (const input of inputs) {
        const verdict = script(typeof input === 'string' ? input : JSON.stringify(input));
        if (!Array.isArray(verdict)) return { status: verdict.status, body: openai.errorBody(verdict.status, 'scripted moderation failure') };
        const categories = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, verdict.includes(c)]));
        const scores = Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, verdict.includes(c) ? 0.97 : 0.001]));
        results.push({ flagged: verdict.length > 0, categories, category_scores: scores });
      }
      return { status: 200, body: { id: `modr-${moderations.length}`, model: body.model, results } };
    },
  };
  const server = await startScriptedServer(openai, 'openai', [moderation]);
  return Object.assign(server, {
    moderations,
    moderate: (s: ModerationScript | null) => void (script = s ?? (() => [])),
  });
}
