import { runnableAgent } from '../support/runnable-agent.js';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger, type Logger } from '../../src/lib/logger.js';
import { SecretBox } from '../../src/lib/secret-box.js';
import type { OrgSecretReader } from '../../src/llm/credentials.js';
import { createRuntime, type Runtime } from '../../src/runtime/runtime.js';
import type { RunOutcome, RunRequest, ThreadMessage } from '../../src/runtime/task-runner.js';
import type { Task, TaskSubmitter } from '../../src/tasks/task.types.js';
import { SchemaChecker } from '../../src/lib/schema-checker.js';
import type { GuardScanner } from '../../src/guardrails/guard-scanner.js';
import type { RuntimeTool, RuntimeToolProvider } from '../../src/tools/tool-kinds.js';

/** Drives the runtime directly (no database): a Task and an agent record built in memory, events collected. */

export const secretBox = new SecretBox(Buffer.alloc(32, 7));

export interface RuntimeOptions {
  env?: Record<string, string>;
  secrets?: Record<string, string>;
  submitter?: TaskSubmitter;
  log?: Logger;
  /** Transport to the providers' own endpoints (a test points it at a local server). */
  publicFetch?: typeof globalThis.fetch;
  /** Where the guards' detectors run (a test's own crossover or deadline). */
  guardScanner?: GuardScanner;
}

export function makeRuntime(opts: RuntimeOptions = {}): Runtime {
  const config = loadConfig({ AGENTRY_EGRESS_ALLOW: '127.0.0.1', AGENTRY_DATA_DIR: '/nonexistent', ...opts.env });
  const secrets: OrgSecretReader = { reveal: async (_org, name) => opts.secrets?.[name] ?? null };
  return createRuntime({
    config,
    schemaChecker: new SchemaChecker(),
    secretBox,
    clock: systemClock,
    log: opts.log ?? createLogger('silent'),
    secrets: () => secrets,
    submitter: () => {
      if (!opts.submitter) throw new Error('no submitter in this test');
      return opts.submitter;
    },
    retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 2000 },
    publicFetch: opts.publicFetch,
    guardScanner: opts.guardScanner,
  });
}

export function makeTask(overrides: Partial<Task> = {}): Task {
  return {
    id: 'task-1',
    agent_id: 'agent-1',
    organization_id: 'org-1',
    agent_version: 1,
    input: { text: 'What is the weather in Paris?', files: [], user: null },
    status: 'executing',
    source: 'api',
    call_depth: 0,
    created_at: new Date().toISOString(),
    started_at: null,
    finished_at: null,
    result: null,
    execution_attempts: 1,
    parent_execution: null,
    sub_executions: [],
    is_manually_stopped: false,
    additional_context: null,
    output_format: null,
    output_schema: null,
    tokens: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    llm_model_provider: null,
    llm_model_name: null,
    title: null,
    user_id: null,
    ...overrides,
  };
}

/** A runnable agent on `baseUrl`; the fields not given get the create schema's defaults (test/support/runnable-agent.ts). */
export function openaiAgent(baseUrl: string, overrides: Record<string, unknown> = {}): RunRequest['agent'] {
  return runnableAgent({
    id: 'agent-1',
    organization_id: 'org-1',
    name: 'Weather Bot',
    description: 'Answers questions about the weather.',
    model_provider: 'openai',
    model_name: 'gpt-test',
    llm_api_base: baseUrl,
    llm_credentials: { name: 'key', description: null, value: secretBox.seal('sk-agent-key') },
    llm_extra_headers: {},
    instructions: { role: ['You are a meteorologist'], goal: ['Give accurate forecasts'], general: 'Be brief.' },
    expected_output: '',
    output_format: 'text',
    agno_settings: { num_history_runs: 10, tool_call_limit: 0 },
    graph: [],
    attached_tools: [],
    knowledge_bases: [],
    ...overrides,
  });
}

export interface Recorded {
  outcome?: RunOutcome;
  error?: unknown;
  events: { type: string; data: Record<string, unknown> }[];
  approvals: { tool: string; arguments: Record<string, unknown> }[];
}

export async function runOnce(
  runtime: Runtime,
  input: {
    agent: RunRequest['agent'];
    task?: Task;
    history?: ThreadMessage[];
    extras?: RunRequest['extras'];
    signal?: AbortSignal;
    approve?: boolean;
  },
): Promise<Recorded> {
  const rec: Recorded = { events: [], approvals: [] };
  try {
    rec.outcome = await runtime.runner.run({
      task: input.task ?? makeTask(),
      agent: input.agent,
      history: input.history ?? [],
      extras: input.extras ?? {},
      signal: input.signal ?? new AbortController().signal,
      emit: async (type, data) => void rec.events.push({ type, data }),
      requestApproval: async (r) => {
        rec.approvals.push(r);
        return input.approve ?? true;
      },
    });
  } catch (e) {
    rec.error = e;
  }
  return rec;
}

export function eventsOf(rec: Recorded, type: string) {
  return rec.events.filter((e) => e.type === type).map((e) => e.data);
}

/** A real tool provider for the tests: graph items of type `tool` with sub_type `test` become tools. */
export function testToolProvider(impl: Record<string, { mutating?: boolean; run: (args: Record<string, unknown>) => unknown }>): RuntimeToolProvider {
  return {
    async buildTools(agent): Promise<RuntimeTool[]> {
      return agent.graph
        .filter((g) => g.type === 'tool' && g.sub_type === 'test' && impl[g.item_id])
        .map((g) => ({
          name: g.item_id,
          description: `Test tool ${g.item_id}`,
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          mutating: impl[g.item_id].mutating ?? false,
          graphItemId: g.item_id,
          execute: async (args) => impl[g.item_id].run(args),
        }));
    },
  };
}
