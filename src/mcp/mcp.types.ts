/** The MCP server settings every path (registry record, inline tool entry, graph item) is reduced to. */

export const MCP_TRANSPORTS = ['streamable-http', 'sse'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

export const MCP_AUTH_TYPES = ['none', 'api_key', 'oauth2'] as const;
export type McpAuthType = (typeof MCP_AUTH_TYPES)[number];

export interface McpServerSettings {
  name: string;
  url: string;
  transport: McpTransport;
  authType: McpAuthType;
  /** Plain text: only ever held in memory for a run or a request. */
  apiKey: string | null;
  clientId: string | null;
  clientSecret: string | null;
  additionalScopes: string[];
  shareUserTokenAcrossOtherAgents: boolean;
  headers: Record<string, string>;
  /** null: every tool the server lists. */
  allowedTools: string[] | null;
}
