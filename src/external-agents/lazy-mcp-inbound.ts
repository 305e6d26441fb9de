import { loadOnce } from '../lib/load-once.js';
import type { McpInboundDeps, McpInboundService } from './inbound/mcp-inbound.service.js';

/**
 * Our MCP endpoint, loaded with the MCP SDK's server side on its first request, not at start: most deployments never
 * receive one, and idle memory is a measured target (src/mcp/mcp-sdk.ts says the same of the client side). A failed
 * load is tried again on the next use.
 */
export class LazyMcpInbound implements Pick<McpInboundService, 'handle'> {
  private readonly service = loadOnce(() => import('./inbound/mcp-inbound.service.js').then((m): McpInboundService => new m.McpInboundService(this.deps)));

  constructor(private readonly deps: McpInboundDeps) {}

  handle(...args: Parameters<McpInboundService['handle']>): Promise<Response> {
    return this.service.get().then((s) => s.handle(...args));
  }
}
