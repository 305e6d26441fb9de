import { describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../../src/console/public/js/sse.js';
import { TraceModel } from '../../src/console/public/js/trace.js';
import { dateInputToIso, durationBetween, formatDuration, formatTokens, prettyJson, shortId, truncate, tryParseJson } from '../../src/console/public/js/format.js';

function parseAll(chunks: string[]): { events: SseEvent[]; parser: SseParser } {
  const events: SseEvent[] = [];
  const parser = new SseParser((e) => events.push(e));
  for (const c of chunks) parser.push(c);
  return { events, parser };
}

describe('SSE parser', () => {
  it('parses ids, event names, multi-line data and skips comments', () => {
    const { events, parser } = parseAll([': keep-alive\n\n', 'id: 7\nevent: llm_call\ndata: {"a":1}\n\n', 'data: line 1\ndata: line 2\n\n']);
    expect(events).toEqual([
      { id: '7', event: 'llm_call', data: '{"a":1}' },
      { id: '7', event: 'message', data: 'line 1\nline 2' },
    ]);
    expect(parser.lastEventId).toBe('7');
  });

  it('handles events split anywhere across chunks, and CR, LF and CRLF line ends', () => {
    const text = 'id: 1\r\ndata: {"x":"a"}\r\n\r\nid: 2\rdata: b\r\rid: 3\ndata: c\n\n';
    const whole = parseAll([text]).events;
    expect(whole.map((e) => e.data)).toEqual(['{"x":"a"}', 'b', 'c']);
    // Every split point, including between the CR and LF of a pair, gives the same events.
    for (let k = 1; k < text.length; k++) expect(parseAll([text.slice(0, k), text.slice(k)]).events, `split at ${k}`).toEqual(whole);
  });

  it('keeps an unfinished event until its blank line arrives, and takes retry and the space rule', () => {
    const { events, parser } = parseAll(['retry: 2500\ndata:no-space\ndata:  two spaces\n']);
    expect(events).toEqual([]);
    expect(parser.retry).toBe(2500);
    parser.push('\n');
    expect(events).toEqual([{ id: null, event: 'message', data: 'no-space\n two spaces' }]);
  });
});

const T0 = Date.parse('2026-11-22T11:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const task = (status: string, extra: Record<string, unknown> = {}) => ({ id: 't1', status, ...extra });

describe('trace model', () => {
  it('folds a run into lifecycle, LLM and tool entries with timings, tokens and errors', () => {
    const m = new TraceModel();
    const events = [
      { type: 'task_created', time: at(0), data: task('pending') },
      { type: 'task_updated', time: at(10), data: task('executing') },
      { type: 'chunk', time: at(200), data: { text: 'Let me ', iteration: 1 } },
      { type: 'chunk', time: at(250), data: { text: 'check.', iteration: 1 } },
      {
        type: 'llm_call',
        time: at(400),
        data: { provider: 'openai', model: 'gpt-x', iteration: 1, latency_ms: 380, tokens: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }, finish_reason: 'tool-calls', tool_calls: ['get_weather'] },
      },
      { type: 'tool_call_request', time: at(410), data: { tool_call_id: 'c1', tool_name: 'get_weather', payload: { city: 'Paris' } } },
      { type: 'tool_call_result', time: at(530), data: { tool_call_id: 'c1', tool_name: 'get_weather', payload: { city: 'Paris' }, result: 'upstream 502', duration_ms: 120, is_error: true } },
      { type: 'llm_call', time: at(900), data: { provider: 'openai', model: 'gpt-x', iteration: 2, latency_ms: 350, tokens: { prompt_tokens: 150, completion_tokens: 30, total_tokens: 180 }, finish_reason: 'stop', tool_calls: [] } },
      { type: 'task_finished', time: at(950), data: task('completed', { result: 'Sunny' }) },
    ];
    for (const e of events) m.add(e);
    expect(m.entries.map((e) => [e.kind, e.title])).toEqual([
      ['lifecycle', 'Task created'],
      ['lifecycle', 'Status: executing'],
      ['llm', 'LLM call · openai/gpt-x'],
      ['tool', 'Tool · get_weather'],
      ['llm', 'LLM call · openai/gpt-x'],
      ['lifecycle', 'Task completed'],
    ]);
    const [, , llm1, tool, llm2] = m.entries;
    // The streamed text belongs to the call it came from; the call started latency_ms before its event.
    expect(llm1).toMatchObject({ text: 'Let me check.', running: false, durationMs: 380, time: T0 + 20, toolCalls: ['get_weather'] });
    expect(m.offset(llm1.time)).toBe(20);
    expect(tool).toMatchObject({ running: false, durationMs: 120, isError: true, error: 'upstream 502', payload: { city: 'Paris' } });
    expect(llm2).toMatchObject({ text: '', durationMs: 350, error: null });
    expect(m.totals).toEqual({ llmCalls: 2, toolCalls: 1, toolErrors: 1, llmErrors: 0, prompt: 250, completion: 50, total: 300 });
  });

  it('names the purpose of helper LLM calls (memory extraction after the task ended)', () => {
    const m = new TraceModel();
    m.add({ type: 'llm_call', time: at(100), data: { purpose: 'session_summary', provider: 'openai', model: 'gpt-x', latency_ms: 50, tokens: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } } });
    m.add({ type: 'task_finished', time: at(900), data: task('completed') });
    m.add({ type: 'llm_call', time: at(1200), data: { purpose: 'memory_extraction', provider: 'openai', model: 'gpt-x', latency_ms: 200 } });
    expect(m.entries.map((e) => [e.kind, e.title])).toEqual([
      ['llm', 'LLM call (session summary) · openai/gpt-x'],
      ['lifecycle', 'Task completed'],
      ['llm', 'LLM call (memory extraction) · openai/gpt-x'],
    ]);
  });

  it('shows a call in progress: a running tool and a streaming LLM call before their end events', () => {
    const m = new TraceModel();
    m.add({ type: 'chunk', time: at(0), data: { text: 'Hel', iteration: 1 } });
    expect(m.entries[0]).toMatchObject({ kind: 'llm', running: true, text: 'Hel' });
    m.add({ type: 'llm_call', time: at(100), data: { provider: 'anthropic', model: 'claude', iteration: 1, latency_ms: 100, error: 'Rate limited', finish_reason: 'error' } });
    expect(m.entries[0]).toMatchObject({ running: false, error: 'Rate limited' });
    expect(m.totals.llmErrors).toBe(1);
    m.add({ type: 'tool_call_request', time: at(200), data: { tool_call_id: 'c9', tool_name: 'slow', payload: {} } });
    expect(m.entries[1]).toMatchObject({ kind: 'tool', running: true, toolName: 'slow' });
  });

  it('keeps a status line only when the status changes, and lists sub-agent, auth and unknown events', () => {
    const m = new TraceModel();
    m.add({ type: 'task_updated', time: at(0), data: task('executing') });
    expect(m.add({ type: 'task_updated', time: at(5), data: task('executing') })).toBeNull();
    m.add({ type: 'task_updated', time: at(6), data: task('pending', { retry_reason: 'worker lost its lease' }) });
    m.add({ type: 'sub_agent_trigger', time: at(10), data: { agent_id: 'a2', task_id: 'child-1', input: 'sub question' } });
    m.add({ type: 'auth_event', time: at(20), data: { status: 'authorization_required', server: 'github' } });
    m.add({ type: 'something_new', time: at(30), data: { x: 1 } });
    m.add({ type: 'guardrail', time: at(40), data: { guard: 'pii', action: 'masked', origin: 'tool', name: 'lookup', kinds: { EMAIL: 1 } } });
    expect(m.entries.map((e) => [e.kind, e.title])).toEqual([
      ['lifecycle', 'Status: executing'],
      ['lifecycle', 'Status: pending'],
      ['sub_agent', 'Sub-agent triggered'],
      ['auth', 'Authorization · authorization_required · github'],
      ['other', 'something_new'],
      ['other', 'Guardrail · pii masked · tool lookup'],
    ]);
    expect(m.entries[1].error).toBe('worker lost its lease');
    expect(m.entries[2]).toMatchObject({ taskId: 'child-1', agentId: 'a2', payload: 'sub question' });
  });

  it('opens a new LLM entry for each run of a continued conversation', () => {
    const m = new TraceModel();
    for (const run of [1, 2]) {
      m.add({ type: 'chunk', time: at(run * 1000), data: { text: `run ${run}`, iteration: 1 } });
      m.add({ type: 'llm_call', time: at(run * 1000 + 50), data: { iteration: 1, latency_ms: 60, tokens: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } });
    }
    expect(m.entries.map((e) => e.text)).toEqual(['run 1', 'run 2']);
  });
});

describe('formatting', () => {
  it('formats durations at every scale', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(2400)).toBe('2.40 s');
    expect(formatDuration(42_000)).toBe('42.0 s');
    expect(formatDuration(185_000)).toBe('3 min 5 s');
    expect(formatDuration(3_720_000)).toBe('1 h 2 min');
    expect(formatDuration(null)).toBe('—');
    expect(durationBetween(at(0), at(1500))).toBe(1500);
    expect(durationBetween(at(0), null, T0 + 99)).toBe(99);
    expect(durationBetween(null, at(1))).toBeNull();
  });

  it('formats tokens of tasks and of provider usage objects', () => {
    expect(formatTokens({ prompt_tokens: 1000, completion_tokens: 234, total_tokens: 1234 })).toBe('1,234 (1,000 in / 234 out)');
    expect(formatTokens({ inputTokens: 3, outputTokens: 4 })).toBe('7 (3 in / 4 out)');
    expect(formatTokens(null)).toBe('—');
  });

  it('pretty-prints JSON, including JSON held in strings, and leaves other text alone', () => {
    expect(prettyJson({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(prettyJson('{"b":true}')).toBe('{\n  "b": true\n}');
    expect(prettyJson('not json {')).toBe('not json {');
    expect(tryParseJson('[1,2]')).toEqual({ ok: true, value: [1, 2] });
    expect(tryParseJson('42')).toEqual({ ok: false });
  });

  it('shortens ids and texts, and turns date inputs into inclusive local-day bounds', () => {
    expect(shortId('0123456789abcdef')).toBe('01234567…');
    expect(shortId('short')).toBe('short');
    expect(truncate('a\n\n b  c', 10)).toBe('a b c');
    expect(truncate('x'.repeat(20), 10)).toBe(`${'x'.repeat(9)}…`);
    const from = dateInputToIso('2026-03-05')!;
    const to = dateInputToIso('2026-03-05', { endOfDay: true })!;
    expect(new Date(from).getDate()).toBe(5);
    expect(new Date(from).getHours()).toBe(0);
    expect(Date.parse(to) - Date.parse(from)).toBe(24 * 3600 * 1000 - 1);
    expect(dateInputToIso('')).toBeUndefined();
    expect(dateInputToIso('05/03/2026')).toBeUndefined();
  });
});
