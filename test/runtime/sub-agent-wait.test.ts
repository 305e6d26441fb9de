import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/runtime/runtime.js';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import type { Task, TaskSubmission, TaskSubmitter } from '../../src/tasks/task.types.js';
import { startOpenAIServer, type ScriptedLlmServer } from '../fakes/openai-server.js';
import { SchemaChecker } from '../../src/lib/schema-checker.js';
import { eventsOf, makeTask, openaiAgent, runOnce, secretBox } from './runtime-helpers.js';

/**
 * The parent's wait for a sub-agent is bounded: a child that never gets a worker slot must not hold the parent
 * forever. The TaskSubmitter here is an in-memory queue that nobody works on.
 */
describe('sub-agent wait', () => {
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await startOpenAIServer();
  });
  afterAll(async () => llm?.close());

  it('gives up after the sync timeout, stops the child and tells the model', async () => {
    const submitted: TaskSubmission[] = [];
    const stopped: string[] = [];
    const submitter: TaskSubmitter = {
      async submit(s) {
        submitted.push(s);
        return makeTask({ id: 'child-1', agent_id: s.agentId, status: 'pending', source: 'sub_agent', parent_execution: s.parentExecution ?? null });
      },
      async accept() {
        throw new Error('a sub-agent is always submitted, never accepted');
      },
      async waitForFinal(_org, id, { timeoutMs }): Promise<Task> {
        await new Promise((r) => setTimeout(r, timeoutMs));
        return makeTask({ id, status: 'pending' });
      },
    };
    const runtime = createRuntime({
      schemaChecker: new SchemaChecker(),
      config: loadConfig({ AGENTRY_EGRESS_ALLOW: '127.0.0.1', AGENTRY_SYNC_TIMEOUT_MS: '300' }),
      secretBox,
      clock: systemClock,
      log: createLogger('silent'),
      submitter: () => submitter,
      stopTask: async (_org, id) => void stopped.push(id),
    });
    llm.handle((req) =>
      req.body.messages.some((m: any) => m.role === 'tool')
        ? { text: 'The helper did not answer in time.' }
        : { toolCalls: [{ id: 'call_1', name: req.tools[0], arguments: { input: 'summarize' } }] },
    );
    const agent = openaiAgent(llm.baseUrl, { graph: [{ item_id: 'helper-agent', name: 'Helper', type: 'agent', targets: [] }] });
    const rec = await runOnce(runtime, { agent });

    expect(rec.outcome).toMatchObject({ status: 'completed', result: 'The helper did not answer in time.' });
    expect(submitted[0]).toMatchObject({ agentId: 'helper-agent', source: 'sub_agent', parentExecution: 'task-1', text: 'summarize' });
    expect(stopped).toEqual(['child-1']);
    expect(eventsOf(rec, 'sub_agent_trigger')[0]).toMatchObject({ agent_id: 'helper-agent', task_id: 'child-1' });
    const [result] = eventsOf(rec, 'tool_call_result');
    expect(result).toMatchObject({ is_error: true, tool_name: 'agent_Helper' });
    expect(String(result.result)).toContain('did not finish');
  });
});
