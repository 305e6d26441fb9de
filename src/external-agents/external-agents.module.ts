import type { Runtime } from '../runtime/runtime.js';
import { A2aAgentRunner, type A2aRunnerDeps } from './a2a.runner.js';
import { CurlAgentRunner } from './curl.runner.js';

/** The runners of the external agent types, registered with the runtime's agent-type registry (one line each). */
export function registerExternalAgents(runtime: Runtime, deps: A2aRunnerDeps): void {
  runtime.agentTypes.register('a2a', new A2aAgentRunner(deps));
  runtime.agentTypes.register('curl', new CurlAgentRunner(deps));
}
