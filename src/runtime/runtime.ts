import type { Config } from '../config.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { SecretBox } from '../lib/secret-box.js';
import { CredentialResolver, type OrgSecretReader } from '../llm/credentials.js';
import { LlmService } from '../llm/llm.service.js';
import type { RetryPolicy } from '../llm/retrying-fetch.js';
import { createEgressPolicy, createSafeFetch } from '../net/safe-fetch.js';
import type { TaskSubmitter } from '../tasks/task.types.js';
import { AgentRunner } from './agent-runner.js';
import { GuardScanner } from '../guardrails/guard-scanner.js';
import { GuardrailService } from '../guardrails/guardrails.service.js';
import { AgentTypeRunners } from './agent-type-runners.js';
import { ContextContributorRegistry } from './context-contributors.js';
import { RunHooks } from './run-hooks.js';
import type { TaskRunner } from './task-runner.js';
import { AgentToolProvider, type SubAgentInfo } from './tools/agent.tools.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import { RuntimeToolRegistry } from './tools/index.js';

/**
 * The runtime as the container exposes it (`c.runtime`):
 * - `runner`: the TaskRunner the worker calls;
 * - `tools`: the run-time tool registry, where each tool kind registers its provider;
 * - `context`: the context contributors (knowledge `vanilla` injection, skills, ...);
 * - `llm`: provider/model/credential resolution, for anything else that calls a model;
 * - `agentTypes`: the runners of agent types that are not run by our LLM loop (external agents: a2a, curl).
 */
export interface Runtime {
  runner: TaskRunner;
  agentTypes: AgentTypeRunners;
  tools: RuntimeToolRegistry;
  context: ContextContributorRegistry;
  llm: LlmService;
  /** Session summaries' store and observers of finished runs (the memory domain registers both). */
  hooks: RunHooks;
  /** The agno_settings guardrails, for model calls made beside a run (memory extraction). */
  guardrails: GuardrailService;
}

export interface RuntimeDeps {
  config: Config;
  /** Tenant JSON Schemas (output_schema, tool arguments) are checked here, off the main thread. */
  schemaChecker: SchemaChecker;
  secretBox: SecretBox;
  clock: Clock;
  log: Logger;
  /** The secrets domain's reader (SecretsService.reveal); without it org secrets are not a credential source. */
  secrets?: () => OrgSecretReader | undefined;
  /** The tasks domain's submitter, for sub-agents; read at call time. */
  submitter: () => TaskSubmitter;
  describeAgent?: (organizationId: string, agentId: string) => Promise<SubAgentInfo | null>;
  /** Stops a sub-agent's task when its parent is stopped. */
  stopTask?: (organizationId: string, taskId: string) => Promise<unknown>;
  /** The longest a parent waits for a sub-agent's task (default: config.syncTimeoutMs). */
  subAgentMaxWaitMs?: number;
  retry?: RetryPolicy;
  /** Transport to public provider endpoints (tests leave it as the global fetch). */
  publicFetch?: typeof globalThis.fetch;
  /** The task's latest trace event of a type (deep planning resumes a plan from it); read at call time. */
  lastEventData?: (organizationId: string, taskId: string, type: 'plan') => Promise<Record<string, unknown> | null>;
  /** Where the guards' detectors run (tests give one with their own crossover); a GuardScanner with the defaults when absent. */
  guardScanner?: GuardScanner;
  /** The egress-checked fetch for custom `llm_api_base` calls; the container shares its one. Built from the config when absent. */
  egressFetch?: typeof globalThis.fetch;
}

export function createRuntime(deps: RuntimeDeps): Runtime {
  // The SDK prints provider warnings (unknown model, unsupported setting) to the console; they belong in the log.
  globalThis.AI_SDK_LOG_WARNINGS = (o) => deps.log.debug({ provider: o.provider, model: o.model, warnings: o.warnings }, 'LLM provider warnings');
  const secrets: OrgSecretReader = {
    reveal: async (orgId, name) => {
      const reader = deps.secrets?.();
      return reader ? reader.reveal(orgId, name) : null;
    },
  };
  const llm = new LlmService({
    credentials: new CredentialResolver(deps.secretBox, deps.config.providerEnv, secrets),
    env: deps.config.providerEnv,
    publicFetch: deps.publicFetch ?? globalThis.fetch,
    egressFetch: deps.egressFetch ?? (createSafeFetch(createEgressPolicy(deps.config.egressAllow)) as typeof globalThis.fetch),
    retry: deps.retry,
    callLimits: deps.config.llmCall,
  });
  const tools = new RuntimeToolRegistry();
  tools.register(
    'agent',
    new AgentToolProvider({
      submitter: deps.submitter,
      describe: deps.describeAgent,
      stopTask: deps.stopTask,
      maxWaitMs: deps.subAgentMaxWaitMs ?? deps.config.syncTimeoutMs,
    }),
  );
  const context = new ContextContributorRegistry(deps.log);
  const guardrails = new GuardrailService({
    piiDefaultRegion: deps.config.guardrails.piiDefaultRegion,
    moderationModel: deps.config.guardrails.moderationModel,
    openaiEndpoint: (agent, signal) => llm.openaiEndpoint(agent, signal),
    scanner: deps.guardScanner ?? new GuardScanner(),
  });
  const hooks = new RunHooks(deps.log);
  const agentTypes = new AgentTypeRunners(new AgentRunner({ llm, tools, context, hooks, clock: deps.clock, log: deps.log, schemaChecker: deps.schemaChecker, guardrails, lastEventData: deps.lastEventData }));
  return { runner: agentTypes, agentTypes, tools, context, llm, hooks, guardrails };
}
