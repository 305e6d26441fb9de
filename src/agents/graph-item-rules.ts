import { z } from 'zod';
import { AppError } from '../errors.js';
import { zodIssuesToDetail } from '../http/validation.js';
import type { GraphItem } from '../tools/tool-kinds.js';
import { MCP_AUTH_TYPES, MCP_TRANSPORTS, type ToolEntry } from './agent.schemas.js';

/**
 * Explicit `graph[]` items (spec 2.4), checked by kind when a request gives `graph`: an item the runtime would not
 * read (an unknown type or sub_type, a skill, workflow, custom function or MCP server that does not exist) or would
 * read wrongly (an MCP item whose auth_type it does not know, whose allowed_tools is not a list) is refused (422 at
 * the item's field) instead of being stored and offering nothing, no credential or every tool of a server.
 * `tool` items (connector operations) are checked against the final attached_tools (agent-tools.ts).
 */

type Loc = (string | number)[];

/** type -> the sub_types the runtime's providers read (src/runtime/tools/*.tools.ts). */
const KINDS: Readonly<Record<string, readonly (string | null)[]>> = {
  tool: [null, 'custom_function'],
  mcp: [null],
  agent: [null],
  skill: [null],
  workflow: [null],
};

/** A secret as a client may send it: the value, "********" (kept from the stored item), or the stored sealed form. */
const SecretValue = z.union([z.string(), z.strictObject({ $sealed: z.string() })]);

/** `settings.mcp_settings` of an `mcp` item: the fields the MCP tool entry takes, in the form the resolver stores them. */
const McpItemSettings = z
  .strictObject({
    mcp_id: z.string().min(1).max(256).optional(),
    name: z.string().nullable().optional(),
    url: z.url({ protocol: /^https?$/ }).optional(),
    transport: z.enum(MCP_TRANSPORTS).optional(),
    auth_type: z.enum(MCP_AUTH_TYPES).optional(),
    // null: every tool of the server (the tool entry's absent allowed_tools); anything but a list of names is refused.
    allowed_tools: z.array(z.string()).nullable().optional(),
    api_key: SecretValue.nullable().optional(),
    client_id: z.string().nullable().optional(),
    client_secret: SecretValue.nullable().optional(),
    additional_scopes: z.array(z.string()).optional(),
    share_user_token_across_other_agents: z.boolean().optional(),
    headers: z.record(z.string(), SecretValue).optional(),
  })
  .superRefine((s, ctx) => {
    if (s.mcp_id) return;
    if (!s.url) ctx.addIssue({ code: 'custom', path: ['url'], message: 'an mcp item needs mcp_id (a registered server) or url (an inline server)' });
    if (s.auth_type === 'api_key' && !s.api_key) ctx.addIssue({ code: 'custom', path: ['api_key'], message: "auth_type 'api_key' needs api_key" });
    // As on the tool entry (mcp.resolver.ts): the OAuth client belongs to a registered server.
    for (const f of ['client_id', 'client_secret'] as const) {
      if (s[f]) ctx.addIssue({ code: 'custom', path: [f], message: `${f} is not accepted on an inline mcp item: register the server (POST /v1/mcp_servers) and use mcp_id` });
    }
    if (s.additional_scopes?.length) ctx.addIssue({ code: 'custom', path: ['additional_scopes'], message: 'additional_scopes are not accepted on an inline mcp item: register the server (POST /v1/mcp_servers) and use mcp_id' });
  });

/** Checks one item through the tool-entry resolver of its kind (it exists in the organization). */
export type EntryCheck = (entry: ToolEntry, loc: Loc, field: string) => Promise<void>;

/** Every explicit item except `tool` operations: kind, sub_type, existence, MCP settings. */
export async function checkGraphItems(graph: readonly GraphItem[], loc: Loc, check: EntryCheck): Promise<void> {
  for (const [i, g] of graph.entries()) {
    const at = [...loc, 'graph', i];
    const subTypes = KINDS[g.type];
    if (!subTypes) throw AppError.invalid([...at, 'type'], `graph item type '${g.type}' is not one of ${Object.keys(KINDS).join(', ')}`);
    if (!subTypes.includes(g.sub_type ?? null)) {
      throw AppError.invalid([...at, 'sub_type'], `a graph item of type '${g.type}' takes sub_type ${subTypes.map((s) => (s === null ? 'null' : `'${s}'`)).join(' or ')}`);
    }
    if (g.type === 'agent') await check({ type: 'agent', agent_id: g.item_id }, at, 'item_id');
    else if (g.type === 'skill') await check({ type: 'skill', skill_name: g.item_id }, at, 'item_id');
    else if (g.type === 'workflow') await check({ type: 'workflow', workflow_id: g.item_id }, at, 'item_id');
    else if (g.type === 'tool' && g.sub_type === 'custom_function') await check({ type: 'custom_function', custom_function_id: g.item_id }, at, 'item_id');
    else if (g.type === 'mcp') await checkMcpItem(g, at, check);
  }
}

async function checkMcpItem(g: GraphItem, at: Loc, check: EntryCheck): Promise<void> {
  const raw = g.settings?.mcp_settings;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw AppError.invalid([...at, 'settings', 'mcp_settings'], 'an mcp item needs settings.mcp_settings with mcp_id (a registered server) or url (an inline server)');
  }
  const r = McpItemSettings.safeParse(raw, { reportInput: true });
  if (!r.success) throw AppError.validation(zodIssuesToDetail(r.error.issues, [...at, 'settings', 'mcp_settings']));
  const s = r.data;
  if (s.mcp_id) await check({ type: 'mcp', mcp_id: s.mcp_id, allowed_tools: s.allowed_tools ?? undefined }, [...at, 'settings', 'mcp_settings'], 'mcp_id');
}
