import type { InboundCall } from '../../tasks/call-depth.js';
import { LegacyJsonRpcTransportHandler, LegacyRestTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { Principal } from '../../auth/principal.js';
import type { AgentsService } from '../../agents/agents.service.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../lib/logger.js';
import type { PublicUrls } from '../../lib/urls.js';
import type { TaskParts } from '../../tasks/tasks.module.js';
import { agentCard } from './agent-card.js';
import { AgentryA2aHandler, type InboundTarget } from './a2a-request-handler.js';

export type JsonRpcAnswer = Record<string, unknown>;
export type RpcOutcome = { kind: 'json'; body: JsonRpcAnswer } | { kind: 'stream'; events: AsyncGenerator<JsonRpcAnswer, void, undefined>; mapError: (e: unknown) => JsonRpcAnswer };

export interface InboundDeps {
  agents: AgentsService;
  tasks: TaskParts;
  urls: PublicUrls;
  syncTimeoutMs: number;
  log: Logger;
}

/** A2A-Version absent, empty or 0.x: a v0.3 client (the protocol's rule; the SDK's compat layer answers it). */
function isLegacy(version: string | undefined): boolean {
  return !version || version.trim() === '' || version.trim().startsWith('0.');
}

/**
 * Agents with `discoverable: true` served as A2A agents: their cards and the JSON-RPC binding (v1.0, and v0.3 through
 * the SDK's compat handler). The caller is the organization's API key (the API's auth hook); an agent that is not
 * discoverable, or of another organization, is not found.
 */
export class A2aInboundService {
  constructor(private readonly deps: InboundDeps) {}

  /** The card as the caller's protocol version shapes it. */
  async card(principal: Principal, agentId: string, version: string | undefined): Promise<unknown> {
    const target = await this.target(principal, agentId);
    if (!isLegacy(version)) return target.card;
    return new LegacyRestTransportHandler(this.handler(target)).getAuthenticatedExtendedAgentCard(new ServerCallContext({ requestedVersion: version }));
  }

  async rpc(principal: Principal, agentId: string, body: unknown, version: string | undefined, clientGone?: AbortSignal, inbound: InboundCall = {}): Promise<RpcOutcome> {
    const target = { ...(await this.target(principal, agentId)), clientGone, caller: principal, ...inbound };
    const legacy = isLegacy(version);
    const id = body && typeof body === 'object' && !Array.isArray(body) && 'id' in body ? (body as { id: unknown }).id : null;
    const mapError = (e: unknown): JsonRpcAnswer => ({
      jsonrpc: '2.0',
      id: typeof id === 'string' || typeof id === 'number' ? id : null,
      error: legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(e) : JsonRpcTransportHandler.mapToJSONRPCError(e),
    });
    const ctx = new ServerCallContext({ requestedVersion: version ?? '0.3', user: { isAuthenticated: true, userName: principal.subject } });
    try {
      if (!legacy) validateVersion(ctx.requestedVersion, target.card, 'JSONRPC');
      const handler = this.handler(target);
      const transport = legacy ? new LegacyJsonRpcTransportHandler(handler) : new JsonRpcTransportHandler(handler);
      const request = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : { invalid: body ?? null };
      const out = await transport.handle(request, ctx);
      if (out && typeof (out as AsyncGenerator)[Symbol.asyncIterator] === 'function') return { kind: 'stream', events: out as AsyncGenerator<JsonRpcAnswer, void, undefined>, mapError };
      return { kind: 'json', body: out as JsonRpcAnswer };
    } catch (e) {
      return { kind: 'json', body: mapError(e) };
    }
  }

  private async target(principal: Principal, agentId: string): Promise<InboundTarget> {
    const agent = await this.deps.agents.find(principal.organizationId, agentId);
    // Not discoverable: not exposed, so as missing as an agent of another organization.
    if (!agent || agent.config.discoverable === false) throw AppError.notFound('Agent');
    if (!agent.developerAccess) throw new AppError('forbidden', 'Developer access is disabled for this agent');
    return { organizationId: principal.organizationId, agentId: agent.id, card: agentCard(agent, this.deps.urls.api) };
  }

  private handler(target: InboundTarget): AgentryA2aHandler {
    return new AgentryA2aHandler({ tasks: this.deps.tasks, syncTimeoutMs: this.deps.syncTimeoutMs, log: this.deps.log }, target);
  }
}
