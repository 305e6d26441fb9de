/**
 * A scripted Anthropic Messages server (POST /v1/messages, streaming and not, tool use, usage) on 127.0.0.1.
 *
 *   const llm = await startAnthropicServer();
 *   // agent: { model_provider: 'anthropic', model_name: 'claude-test', llm_api_base: llm.baseUrl, llm_credentials: {...} }
 *   llm.reply({ text: 'Hello!' });
 *   llm.reply({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }, { text: 'Sunny.' });
 *   llm.reply({ status: 529, error: 'overloaded' });
 *   llm.reply({ thinking: { text: 'Paris first.', signature: 'sig-1' }, toolCalls: [...] });
 *   llm.handle((req) => ({ text: `you said: ${req.lastUserText}` }));
 *   llm.requests[0].body.messages; llm.requests[0].system; llm.requests[0].headers['x-api-key'];
 *   await llm.close();
 *
 * Same scripting as openai-server.ts (see scripted-llm.ts for ScriptedReply): a queue of replies, then the
 * handler, else 500 "no scripted reply". Usage defaults to 10 input + 5 output tokens.
 */
import {
  argumentsText,
  chunksOf,
  DEFAULT_USAGE,
  startScriptedServer,
  type Protocol,
  type ScriptedLlmServer,
  type ScriptedReply,
} from './scripted-llm.js';

export type { RecordedRequest, ScriptedLlmServer, ScriptedReply } from './scripted-llm.js';

function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: any) => (b?.type === 'text' ? b.text : '')).join('');
  return '';
}

function input(c: { arguments: Record<string, unknown> | string }): unknown {
  return typeof c.arguments === 'string' ? JSON.parse(c.arguments) : c.arguments;
}

function stopOf(reply: ScriptedReply): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn');
}

const anthropic: Protocol = {
  matches: (method, path) => method === 'POST' && /\/messages$/.test(path),
  describe(body) {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    // A user turn that only carries tool results is not something the user said.
    const said = messages.filter((m) => m.role === 'user' && blocksText(m.content) !== '');
    return {
      stream: body.stream === true,
      tools: Array.isArray(body.tools) ? body.tools.map((t: any) => t.name) : [],
      system: blocksText(body.system),
      lastUserText: said.length ? blocksText(said[said.length - 1].content) : '',
    };
  },
  errorBody: (status, message) => ({
    type: 'error',
    error: { type: status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : 'api_error', message },
  }),
  json(reply, body, ids) {
    const content: unknown[] = [];
    if (reply.thinking) content.push({ type: 'thinking', thinking: reply.thinking.text, signature: reply.thinking.signature });
    if (reply.text) content.push({ type: 'text', text: reply.text });
    for (const c of reply.toolCalls ?? []) content.push({ type: 'tool_use', id: c.id ?? `toolu_${ids()}`, name: c.name, input: input(c) });
    return {
      id: `msg_${ids()}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content,
      stop_reason: stopOf(reply),
      stop_sequence: null,
      usage: {
        input_tokens: reply.usage?.prompt_tokens ?? DEFAULT_USAGE.prompt_tokens,
        output_tokens: reply.usage?.completion_tokens ?? DEFAULT_USAGE.completion_tokens,
      },
    };
  },
  stream(reply, body, ids, write) {
    const inputTokens = reply.usage?.prompt_tokens ?? DEFAULT_USAGE.prompt_tokens;
    const outputTokens = reply.usage?.completion_tokens ?? DEFAULT_USAGE.completion_tokens;
    const send = (type: string, data: Record<string, unknown>) => write(type, { type, ...data });
    send('message_start', {
      message: {
        id: `msg_${ids()}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 1 },
      },
    });
    let index = 0;
    if (reply.thinking) {
      send('content_block_start', { index, content_block: { type: 'thinking', thinking: '' } });
      for (const piece of chunksOf(reply.thinking.text)) send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
      send('content_block_delta', { index, delta: { type: 'signature_delta', signature: reply.thinking.signature } });
      send('content_block_stop', { index });
      index++;
    }
    if (reply.text) {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const piece of chunksOf(reply.text)) send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      send('content_block_stop', { index });
      index++;
    }
    for (const c of reply.toolCalls ?? []) {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: c.id ?? `toolu_${ids()}`, name: c.name, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: argumentsText(c.arguments) } });
      send('content_block_stop', { index });
      index++;
    }
    send('message_delta', { delta: { stop_reason: stopOf(reply), stop_sequence: null }, usage: { output_tokens: outputTokens } });
    send('message_stop', {});
  },
};

export function startAnthropicServer(): Promise<ScriptedLlmServer> {
  return startScriptedServer(anthropic, 'anthropic');
}
