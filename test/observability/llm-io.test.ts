import { afterEach, describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import { llmIoForTrace, setLlmIoLimit } from '../../src/observability/llm-io.js';
import { TraceModel } from '../../src/console/public/js/trace.js';

/** What the trace keeps of an LLM call (the size cap), and how the console's trace model reads it. */
describe('LLM input and output in the trace', () => {
  afterEach(() => setLlmIoLimit(16_000));

  const conversation: ModelMessage[] = [
    { role: 'user', content: 'first question '.repeat(20) },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: { q: 'x' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'lookup', output: { type: 'text', value: 'found it' } }] },
    { role: 'user', content: [{ type: 'text', text: 'latest question' }, { type: 'image', image: 'aGVsbG8=', mediaType: 'image/png' }] },
  ];

  it('keeps every message as text when it fits, with tool calls, results and attachments named', () => {
    const io = llmIoForTrace('You are a bot.', conversation, 'The answer.', [{ toolName: 'lookup', input: { q: 'y' } }]);
    expect(io.input).toEqual({
      system: 'You are a bot.',
      messages: [
        { role: 'user', content: 'first question '.repeat(20) },
        { role: 'assistant', content: '[tool call lookup] {"q":"x"}' },
        { role: 'tool', content: '[tool result lookup] found it' },
        // An attachment's bytes never reach the trace: only its type.
        { role: 'user', content: 'latest question\n[image image/png]' },
      ],
      truncated: false,
    });
    expect(io.output).toEqual({ text: 'The answer.', tool_calls: [{ name: 'lookup', arguments: '{"q":"y"}' }], truncated: false });
  });

  it('cuts each side to the limit, keeping the newest messages, and keeps nothing at 0', () => {
    setLlmIoLimit(100);
    const io = llmIoForTrace('S'.repeat(10), conversation, 'A'.repeat(500), []);
    const kept = io.input!.system.length + io.input!.messages.reduce((n, m) => n + m.content.replace(/…$/, '').length, 0);
    expect(kept).toBeLessThanOrEqual(100);
    expect(io.input!.truncated).toBe(true);
    // The newest message is whole; the oldest did not fit.
    expect(io.input!.messages.at(-1)).toEqual({ role: 'user', content: 'latest question\n[image image/png]' });
    expect(io.input!.messages.some((m) => m.content.startsWith('first question'))).toBe(false);
    expect(io.output).toEqual({ text: `${'A'.repeat(100)}…`, tool_calls: [], truncated: true });

    setLlmIoLimit(0);
    expect(llmIoForTrace('s', conversation, 'a', [])).toEqual({});
  });

  it('the console shows the input and the output of a finished call', () => {
    const m = new TraceModel();
    const input = { system: 'sys', messages: [{ role: 'user', content: 'hi' }], truncated: false };
    const output = { text: 'hello', tool_calls: [], truncated: false };
    const entry = m.add({ type: 'llm_call', time: new Date().toISOString(), data: { provider: 'openai', model: 'gpt', iteration: 1, latency_ms: 5, input, output } })!;
    expect(entry).toMatchObject({ kind: 'llm', input, output, text: 'hello' });
  });
});
