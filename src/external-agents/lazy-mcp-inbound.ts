import type { McpInboundDeps, McpInboundService } from './inbound/mcp-inbound.service.js';

/**
 * Our MCP endpoint, loaded with the MCP SDK's server side on its first request, not at start: most deployments never
 * receive one, and idle memory is a measured target (src/mcp/mcp-sdk.ts says the same of the client side).
 */
export class LazyMcpInbound implements Pick<McpInboundService, 'handle'> {
  private service?: Promise<McpInboundService>;

  constructor(private readonly deps: McpInboundDeps) {}

  handle(...args: Parameters<McpInboundService['handle']>): Promise<Response> {
    this.service ??= import('./inbound/mcp-inbound.service.js').then((m) => new m.McpInboundService(this.deps));
    return this.service.then((s) => s.handle(...args));
  }
}
