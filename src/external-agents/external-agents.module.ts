import type { Runtime } from '../runtime/runtime.js';
import type { A2aRunnerDeps } from './a2a.runner.js';
import { LazyA2aRunner } from './lazy-a2a.js';
import { CurlAgentRunner } from './curl.runner.js';

/** The runners of the external agent types, registered with the runtime's agent-type registry (one line each). */
export function registerExternalAgents(runtime: Runtime, deps: A2aRunnerDeps): void {
  runtime.agentTypes.register('a2a', new LazyA2aRunner(deps));
  runtime.agentTypes.register('curl', new CurlAgentRunner(deps));
}
