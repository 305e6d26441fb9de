import type { RunOutcome, RunRequest, TaskRunner } from '../../src/runtime/task-runner.js';
import { scriptedAgentFields } from '../support/agents.js';
import { createTestApp, type DbKind, type TestApp } from '../support/harness.js';

/**
 * An in-process API plus a worker on one database: createTestApp with the `api,worker` roles, a 2 s lease and the
 * runner replaceable (the real runtime against the scripted LLM servers by default, a ScriptedRunner for
 * queue-level tests).
 */
export type TasksApp = TestApp;

export async function createTasksApp(
  kind: DbKind,
  opts: { runner?: TaskRunner; env?: Record<string, string>; worker?: boolean } = {},
): Promise<TasksApp> {
  return createTestApp(kind, {
    roles: 'api,worker',
    env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1', AGENTRY_TASK_LEASE_MS: '2000', ...opts.env },
    runner: opts.runner,
    startWorker: opts.worker !== false,
  });
}

/** An agent that talks to a scripted OpenAI-compatible server, published at once, answering in plain text. */
export function openaiAgentFields(baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return scriptedAgentFields(baseUrl, { model_name: 'gpt-4o', output_format: 'text', should_stage_before_publish: false, ...extra });
}

/**
 * A TaskRunner for queue-level tests: each run calls the current handler, which can emit, wait for the abort
 * signal, or ask for approval through the RunRequest like the real runtime does.
 */
export class ScriptedRunner implements TaskRunner {
  readonly requests: RunRequest[] = [];
  handler: (req: RunRequest) => Promise<Partial<RunOutcome>> = async (req) => ({ result: `echo: ${req.task.input.text}` });

  async run(req: RunRequest): Promise<RunOutcome> {
    this.requests.push(req);
    const out = await this.handler(req);
    return {
      status: 'completed',
      result: '',
      tokens: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      messages: [
        { role: 'user', content: req.task.input.text, created_at: new Date().toISOString() },
        { role: 'assistant', content: out.result ?? '', created_at: new Date().toISOString() },
      ],
      llm_model_provider: 'scripted',
      llm_model_name: 'scripted-1',
      ...out,
    };
  }
}

/** Resolves when the signal aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}
