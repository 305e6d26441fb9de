import { createHash } from 'node:crypto';
import { REDACTED, type SecretBox } from '../lib/secret-box.js';
import type { GraphItem } from '../tools/tool-kinds.js';
import { MCP_AUTH_TYPES, MCP_TRANSPORTS, type McpAuthType, type McpServerSettings, type McpTransport } from './mcp.types.js';

/**
 * Graph items of type `mcp` (spec 2.4): `settings.mcp_settings` carries url, transport, auth_type, name and
 * allowed_tools. Registry servers add `mcp_id` (the runtime reads the registry's current url and credentials, so a
 * rotated key applies at once); inline servers carry their own settings, their secrets as `{"$sealed": ...}` values
 * (the agents domain's sealed form: shown as "********", opened for the runtime). A "********" sent back (an entry
 * read and written again) stays "********" here: sealing it would store the placeholder as the key; the agents
 * domain puts the stored secret of the same item in its place, or refuses it (agent-secrets.ts).
 */

export interface McpEntry {
  mcp_id?: string;
  url?: string;
  name?: string;
  transport?: McpTransport;
  auth_type?: McpAuthType;
  api_key?: string;
  client_id?: string;
  client_secret?: string;
  additional_scopes?: string[];
  share_user_token_across_other_agents?: boolean;
  headers?: Record<string, string>;
  allowed_tools?: string[];
}

/**
 * A stable id for an inline server, so the key callers use in `user_tokens` survives re-saving the agent:
 * UUID-shaped, derived from the url and name.
 */
export function inlineMcpItemId(url: string, name: string): string {
  const h = createHash('sha256').update(`${url}\n${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function defaultMcpName(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'mcp';
  }
}

export function registryMcpItem(mcpId: string, s: McpServerSettings, allowedTools: string[] | undefined): GraphItem {
  return {
    id: mcpId,
    item_id: mcpId,
    name: s.name,
    type: 'mcp',
    sub_type: null,
    targets: [],
    settings: {
      mcp_settings: {
        mcp_id: mcpId,
        name: s.name,
        url: s.url,
        transport: s.transport,
        auth_type: s.authType,
        allowed_tools: allowedTools ?? s.allowedTools,
      },
    },
    is_first: false,
  };
}

export function inlineMcpItem(entry: McpEntry & { url: string }, box: SecretBox): GraphItem {
  const name = entry.name?.trim() || defaultMcpName(entry.url);
  const id = inlineMcpItemId(entry.url, name);
  const seal = (v: string) => (v === REDACTED ? REDACTED : { $sealed: box.seal(v) });
  const sealed = (v: string | undefined) => (v ? seal(v) : null);
  return {
    id,
    item_id: id,
    name,
    type: 'mcp',
    sub_type: null,
    targets: [],
    settings: {
      mcp_settings: {
        name,
        url: entry.url,
        transport: entry.transport ?? 'streamable-http',
        auth_type: entry.auth_type ?? 'none',
        allowed_tools: entry.allowed_tools ?? null,
        api_key: sealed(entry.api_key),
        client_id: entry.client_id ?? null,
        client_secret: sealed(entry.client_secret),
        additional_scopes: entry.additional_scopes ?? [],
        share_user_token_across_other_agents: entry.share_user_token_across_other_agents ?? true,
        headers: Object.fromEntries(Object.entries(entry.headers ?? {}).map(([k, v]) => [k, seal(v)])),
      },
    },
    is_first: false,
  };
}

export function mcpSettingsOf(item: GraphItem): Record<string, unknown> {
  const s = item.settings?.mcp_settings;
  return s && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
}

/** A secret as the runtime receives it: opened by the agents domain, or still sealed. */
function secret(v: unknown, box: SecretBox): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (v && typeof v === 'object' && typeof (v as { $sealed?: unknown }).$sealed === 'string') return box.open((v as { $sealed: string }).$sealed);
  return null;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** The settings of an inline item; throws when the item is unusable (no URL). */
export function inlineSettings(item: GraphItem, box: SecretBox): McpServerSettings {
  const s = mcpSettingsOf(item);
  if (typeof s.url !== 'string' || !s.url) throw new Error(`MCP graph item '${item.item_id}' has no url`);
  const headers: Record<string, string> = {};
  if (s.headers && typeof s.headers === 'object') {
    for (const [k, v] of Object.entries(s.headers as Record<string, unknown>)) {
      const value = secret(v, box);
      if (value !== null) headers[k] = value;
    }
  }
  return {
    name: typeof s.name === 'string' && s.name ? s.name : (item.name ?? defaultMcpName(s.url)),
    url: s.url,
    transport: (MCP_TRANSPORTS as readonly string[]).includes(s.transport as string) ? (s.transport as McpTransport) : 'streamable-http',
    authType: (MCP_AUTH_TYPES as readonly string[]).includes(s.auth_type as string) ? (s.auth_type as McpAuthType) : 'none',
    apiKey: secret(s.api_key, box),
    clientId: typeof s.client_id === 'string' ? s.client_id : null,
    clientSecret: secret(s.client_secret, box),
    additionalScopes: strings(s.additional_scopes),
    shareUserTokenAcrossOtherAgents: s.share_user_token_across_other_agents !== false,
    headers,
    allowedTools: Array.isArray(s.allowed_tools) ? strings(s.allowed_tools) : null,
  };
}
