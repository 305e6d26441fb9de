import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicServer } from '../fakes/anthropic-server.js';
import { startOpenAIServer } from '../fakes/openai-server.js';
import type { ScriptedLlmServer } from '../fakes/scripted-llm.js';
import { eventsOf, makeRuntime, openaiAgent, runOnce } from '../runtime/runtime-helpers.js';

/**
 * The bounds of one LLM call (src/llm/llm-call-limits.ts), against scripted servers on 127.0.0.1 that stall or stream
 * for ever: the run must end with an `error` outcome that names the bound, and its trace must show the failed call.
 */
const SHORT = {
  AGENTRY_LLM_FIRST_BYTE_TIMEOUT_MS: '300',
  AGENTRY_LLM_IDLE_TIMEOUT_MS: '300',
  AGENTRY_LLM_CALL_TIMEOUT_MS: '1500',
  AGENTRY_LLM_MAX_ANSWER_CHARS: '100000',
};

describe('LLM call bounds', () => {
  let llm: ScriptedLlmServer;
  let anthropic: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
    anthropic = await startAnthropicServer();
  });
  afterAll(async () => {
    await llm?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    llm.requests.length = 0;
    llm.handle(null);
    anthropic.requests.length = 0;
  });

  it('retries an endpoint that sends no response headers, then fails the run naming the setting', async () => {
    const rt = makeRuntime({ env: SHORT });
    // The runtime helpers' retry policy: 2 retries, so 3 attempts, each cut at the first-byte deadline.
    llm.handle(() => ({ delayMs: 60_000, text: 'never' }));
    const started = Date.now();
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(rec.outcome?.status).toBe('error');
    expect(rec.outcome?.result).toContain('no response from the endpoint within 300 ms (AGENTRY_LLM_FIRST_BYTE_TIMEOUT_MS)');
    expect(llm.requests).toHaveLength(3);
    expect(eventsOf(rec, 'llm_call')[0]).toMatchObject({ finish_reason: 'error' });
    expect(String(eventsOf(rec, 'llm_call')[0].error)).toContain('AGENTRY_LLM_FIRST_BYTE_TIMEOUT_MS');
  });

  it('succeeds when a retried attempt answers in time', async () => {
    const rt = makeRuntime({ env: SHORT });
    llm.reply({ delayMs: 60_000, text: 'too late' }, { text: 'On time.' });
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'On time.' });
    expect(llm.requests).toHaveLength(2);
  });

  it('fails a streamed answer that goes silent after its headers (direct stream)', async () => {
    const rt = makeRuntime({ env: SHORT });
    llm.reply({ stallAfterHeaders: true });
    const started = Date.now();
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(rec.outcome?.status).toBe('error');
    expect(rec.outcome?.result).toContain('the answer streamed nothing for 300 ms (AGENTRY_LLM_IDLE_TIMEOUT_MS)');
    // Not retried: a stream that began may have shown chunks already.
    expect(llm.requests).toHaveLength(1);
  });

  it('fails a silent stream read through the SDK (Anthropic) the same way', async () => {
    const rt = makeRuntime({ env: SHORT });
    anthropic.reply({ stallAfterHeaders: true });
    const rec = await runOnce(rt, { agent: openaiAgent(anthropic.baseUrl, { model_provider: 'anthropic', model_name: 'claude-test' }) });
    expect(rec.outcome?.status).toBe('error');
    expect(rec.outcome?.result).toContain('AGENTRY_LLM_IDLE_TIMEOUT_MS');
  });

  it('ends an answer that streams small deltas for ever at the call deadline', async () => {
    const rt = makeRuntime({ env: SHORT });
    llm.reply({ endless: { everyMs: 20, delta: 'la ' } });
    const started = Date.now();
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(rec.outcome?.status).toBe('error');
    expect(rec.outcome?.result).toContain('the answer did not end within 1.5 s (AGENTRY_LLM_CALL_TIMEOUT_MS)');
    // What streamed before the bound still reached the live view.
    expect(eventsOf(rec, 'chunk').length).toBeGreaterThan(0);
  });

  it('ends an answer longer than AGENTRY_LLM_MAX_ANSWER_CHARS', async () => {
    const rt = makeRuntime({ env: { ...SHORT, AGENTRY_LLM_CALL_TIMEOUT_MS: '60000', AGENTRY_LLM_MAX_ANSWER_CHARS: '5000' } });
    llm.reply({ endless: { everyMs: 1, delta: 'x'.repeat(500) } });
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(rec.outcome?.status).toBe('error');
    expect(rec.outcome?.result).toContain('the answer is longer than 5000 characters (AGENTRY_LLM_MAX_ANSWER_CHARS)');
  });

  it('leaves an answer within the bounds alone', async () => {
    const rt = makeRuntime({ env: SHORT });
    llm.reply({ text: 'A normal answer, streamed in several small chunks as models do.' });
    const rec = await runOnce(rt, { agent: openaiAgent(llm.baseUrl) });
    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'A normal answer, streamed in several small chunks as models do.' });
  });
});
