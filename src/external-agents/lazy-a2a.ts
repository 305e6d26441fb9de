import type { InboundCall } from '../tasks/call-depth.js';
import type { RunOutcome, RunRequest, TaskRunner } from '../runtime/task-runner.js';
import type { A2aRunnerDeps } from './a2a.runner.js';
import type { A2aInboundService, InboundDeps, RpcOutcome } from './inbound/a2a-inbound.service.js';
import type { Principal } from '../auth/principal.js';
import { loadOnce } from '../lib/load-once.js';

/**
 * The A2A SDK (about 8 MB resident) is loaded by the first A2A run or request, not at start: most deployments never
 * talk A2A, and idle memory is a measured target (docs/benchmarks.md). A failed load is tried again on the next
 * use.
 */
export class LazyA2aRunner implements TaskRunner {
  private readonly runner = loadOnce(() => import('./a2a.runner.js').then((m): TaskRunner => new m.A2aAgentRunner(this.deps)));

  constructor(private readonly deps: A2aRunnerDeps) {}

  run(req: RunRequest): Promise<RunOutcome> {
    return this.runner.get().then((r) => r.run(req));
  }
}

/** A2aInboundService, loaded on the first A2A request. */
export class LazyA2aInbound implements Pick<A2aInboundService, 'card' | 'rpc'> {
  private readonly service = loadOnce(() => import('./inbound/a2a-inbound.service.js').then((m): A2aInboundService => new m.A2aInboundService(this.deps)));

  constructor(private readonly deps: InboundDeps) {}

  async card(principal: Principal, agentId: string, version: string | undefined): Promise<unknown> {
    return (await this.service.get()).card(principal, agentId, version);
  }

  async rpc(principal: Principal, agentId: string, body: unknown, version: string | undefined, clientGone?: AbortSignal, inbound: InboundCall = {}): Promise<RpcOutcome> {
    return (await this.service.get()).rpc(principal, agentId, body, version, clientGone, inbound);
  }
}
