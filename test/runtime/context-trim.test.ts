import { APICallError, type ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { ELIDED_RESULT, isContextOverflow, trimForContext } from '../../src/runtime/context-trim.js';
import { LlmCallError } from '../../src/runtime/llm-step.js';

const apiError = (statusCode: number, body: string) =>
  new LlmCallError('failed', new APICallError({ message: 'Bad Request', url: 'http://x', requestBodyValues: {}, statusCode, responseBody: body }));
const toolResult = (id: string, value: string): ModelMessage => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 't', output: { type: 'text', value } }] });
const call = (id: string): ModelMessage => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 't', input: {} }] });

describe('context trimming (with_auto_context_management)', () => {
  it('recognises the providers\' refusals for size, and nothing else', () => {
    expect(isContextOverflow(apiError(400, '{"error":{"message":"This model\'s maximum context length is 128000 tokens.","code":"context_length_exceeded"}}'))).toBe(true);
    expect(isContextOverflow(apiError(400, '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}'))).toBe(true);
    expect(isContextOverflow(apiError(400, '{"error":{"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}}'))).toBe(true);
    expect(isContextOverflow(apiError(400, '{"error":{"message":"Invalid value for tool_choice"}}'))).toBe(false);
    expect(isContextOverflow(apiError(500, '{"error":{"message":"maximum context length"}}'))).toBe(false);
    expect(isContextOverflow(new Error('maximum context length'))).toBe(false);
  });

  it('drops the oldest half of the history without leaving a tool result before its call', () => {
    const messages: ModelMessage[] = [{ role: 'user', content: 'old 1' }, call('a'), toolResult('a', 'ra'), { role: 'assistant', content: 'done 1' }, { role: 'user', content: 'now' }];
    const trim = trimForContext(messages, 4);
    expect(trim).toEqual({ removedMessages: 3, elidedResults: 0, historyEnd: 1 });
    expect(messages.map((m) => m.role)).toEqual(['assistant', 'user']);
  });

  it('then elides older results of this run, then cuts the latest step, and says when nothing is left', () => {
    const messages: ModelMessage[] = [{ role: 'user', content: 'now' }, call('a'), toolResult('a', 'A'.repeat(10_000)), call('b'), toolResult('b', 'B'.repeat(10_000))];
    expect(trimForContext(messages, 0)).toEqual({ removedMessages: 0, elidedResults: 1, historyEnd: 0 });
    expect(JSON.stringify(messages[2])).toContain(ELIDED_RESULT);
    expect(trimForContext(messages, 0)).toEqual({ removedMessages: 0, elidedResults: 1, historyEnd: 0 });
    expect(JSON.stringify(messages[4]).length).toBeLessThan(4_000);
    expect(trimForContext(messages, 0)).toBeUndefined();
  });
});
