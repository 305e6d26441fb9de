import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { eventsOf, makeRuntime, makeTask, openaiAgent, runOnce } from './runtime-helpers.js';

const EMAIL = 'ada.lovelace@example.com';

/** Deep planning under the PII guard: the plan keeps the real values, the model only ever sees placeholders. */
describe('deep planning with pii_detection_enabled', () => {
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
  });
  afterAll(async () => llm?.close());

  it('the reminder quoting open steps is masked before it reaches the model', async () => {
    const rt = makeRuntime();
    llm.reply(
      { toolCalls: [{ name: 'create_plan', arguments: { steps: ['Mail <EMAIL_1> the summary'] } }] },
      { text: 'Done early.' },
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 1, status: 'completed' } }] },
      { text: 'Mailed <EMAIL_1>.' },
    );
    const agent = openaiAgent(llm.baseUrl, { deep_planning: true, agno_settings: { pii_detection_enabled: true, pii_detection_mask: true } });
    const rec = await runOnce(rt, { agent, task: makeTask({ input: { text: `Send the summary to ${EMAIL}`, files: [], user: null } }) });

    expect(rec.outcome).toMatchObject({ status: 'completed', result: `Mailed ${EMAIL}.` });
    const sent = llm.requests.map((r) => JSON.stringify(r.body)).join('\n');
    expect(sent).not.toContain(EMAIL);
    expect(llm.requests[2].lastUserText).toContain('Your plan still has open steps: 1. Mail <EMAIL_1> the summary');
    // The plan itself (the trace, the console) has the real value, as tool payloads do.
    expect((eventsOf(rec, 'plan')[0].plan as { steps: { title: string }[] }).steps[0].title).toBe(`Mail ${EMAIL} the summary`);
  });
});
