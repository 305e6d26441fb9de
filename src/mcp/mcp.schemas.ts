import { z } from 'zod';
import { isoOrNull, isoTime } from '../lib/clock.js';
import { REDACTED } from '../lib/secret-box.js';
import { MCP_AUTH_TYPES, MCP_TRANSPORTS } from './mcp.types.js';
import type { McpServerRecord } from './mcp-servers.repository.js';
import type { McpUserTokenMeta } from './mcp-user-tokens.repository.js';

const httpUrl = z.url({ protocol: /^https?$/ }).max(2048);

/** The inline fields of spec 2.3 (registry form): `name` and `url` required. */
export const McpServerCreateBody = z
  .object({
    name: z.string().min(1).max(200),
    description: z.string().max(4000).nullish(),
    url: httpUrl,
    transport: z.enum(MCP_TRANSPORTS).default('streamable-http'),
    auth_type: z.enum(MCP_AUTH_TYPES).default('none'),
    api_key: z.string().min(1).max(8192).nullish(),
    client_id: z.string().max(1024).nullish(),
    client_secret: z.string().max(8192).nullish(),
    additional_scopes: z.array(z.string().max(512)).max(100).default([]),
    share_user_token_across_other_agents: z.boolean().default(true),
    headers: z.record(z.string().min(1).max(256), z.string().max(8192)).default({}),
    allowed_tools: z.array(z.string().min(1).max(256)).max(1000).nullish(),
  })
  .strict();

/** PATCH: any field; `headers` replaces the stored set; `null` clears a secret. */
export const McpServerPatchBody = z
  .object({
    name: z.string().min(1).max(200),
    description: z.string().max(4000).nullable(),
    url: httpUrl,
    transport: z.enum(MCP_TRANSPORTS),
    auth_type: z.enum(MCP_AUTH_TYPES),
    api_key: z.string().min(1).max(8192).nullable(),
    client_id: z.string().max(1024).nullable(),
    client_secret: z.string().max(8192).nullable(),
    additional_scopes: z.array(z.string().max(512)).max(100),
    share_user_token_across_other_agents: z.boolean(),
    headers: z.record(z.string().min(1).max(256), z.string().max(8192)),
    allowed_tools: z.array(z.string().min(1).max(256)).max(1000).nullable(),
  })
  .partial()
  .strict();

export type McpServerCreate = z.output<typeof McpServerCreateBody>;
export type McpServerPatch = z.output<typeof McpServerPatchBody>;

export const McpServerParams = z.object({ id: z.string().min(1).max(128) });

/** Secrets are write-only: shown as "********" when set; header names are shown, their values are not. */
export function presentMcpServer(r: McpServerRecord) {
  return {
    id: r.id,
    organization_id: r.organizationId,
    name: r.name,
    description: r.description,
    url: r.url,
    transport: r.transport,
    auth_type: r.authType,
    api_key: r.hasApiKey ? REDACTED : null,
    client_id: r.clientId,
    client_secret: r.hasClientSecret ? REDACTED : null,
    additional_scopes: r.additionalScopes,
    share_user_token_across_other_agents: r.shareUserTokenAcrossOtherAgents,
    headers: Object.fromEntries(r.headerNames.map((h) => [h, REDACTED])),
    allowed_tools: r.allowedTools,
    created_at: isoTime(r.createdAt),
    updated_at: isoTime(r.updatedAt),
  };
}

/** PUT /v1/mcp_servers/{id}/user_tokens/{user_id}: the user's OAuth access token, optionally with its lifetime in seconds. */
export const McpUserTokenPutBody = z
  .object({
    access_token: z.string().min(1).max(16_384),
    expires_in: z.number().int().positive().max(10 * 365 * 24 * 3600).nullish(),
  })
  .strict();

/** `user_id` up to 256, or `{agent_id}_{user_id}` for servers that do not share tokens across agents. */
export const McpUserTokenParams = z.object({ id: z.string().min(1).max(128), user_id: z.string().min(1).max(300) });

/** A stored user token as the API shows it: never the token itself. */
export function presentMcpUserToken(t: McpUserTokenMeta) {
  return {
    user_id: t.userId,
    mcp_server_id: t.mcpServerId,
    expires_at: isoOrNull(t.expiresAt),
    created_at: isoTime(t.createdAt),
    updated_at: isoTime(t.updatedAt),
  };
}
