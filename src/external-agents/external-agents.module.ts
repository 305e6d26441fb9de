import type { AgentsService } from '../agents/agents.service.js';
import type { Runtime } from '../runtime/runtime.js';
import type { TaskParts } from '../tasks/tasks.module.js';
import type { PublicUrls } from '../lib/urls.js';
import type { A2aRunnerDeps } from './a2a.runner.js';
import { LazyMcpInbound } from './lazy-mcp-inbound.js';
import { LazyA2aInbound, LazyA2aRunner } from './lazy-a2a.js';
import { CurlAgentRunner } from './curl.runner.js';

/** The runners of the external agent types, registered with the runtime's agent-type registry (one line each). */
export function registerExternalAgents(runtime: Runtime, deps: A2aRunnerDeps): void {
  runtime.agentTypes.register('a2a', new LazyA2aRunner(deps));
  runtime.agentTypes.register('curl', new CurlAgentRunner(deps));
}

export interface ExternalAgentsModule {
  a2a: LazyA2aInbound;
  mcpEndpoint: LazyMcpInbound;
}

/**
 * External agents (issue 22): `a2a` and `curl` agent types run through their own runners; discoverable agents are
 * served over A2A and as an MCP server.
 */
export function createExternalAgentsModule(d: {
  runtime: Runtime;
  runners: A2aRunnerDeps;
  agents: AgentsService;
  tasks: TaskParts;
  urls: PublicUrls;
  syncTimeoutMs: number;
}): ExternalAgentsModule {
  registerExternalAgents(d.runtime, d.runners);
  return {
    a2a: new LazyA2aInbound({ agents: d.agents, tasks: d.tasks, urls: d.urls, syncTimeoutMs: d.syncTimeoutMs, log: d.runners.log }),
    mcpEndpoint: new LazyMcpInbound({ agents: d.agents, tasks: d.tasks.submissions, syncTimeoutMs: d.syncTimeoutMs, log: d.runners.log }),
  };
}
