import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { AppError } from '../../src/errors.js';
import type { ToolEntryResolver } from '../../src/tools/tool-kinds.js';
import { injectPoster, postAgent } from '../support/agents.js';
import type { TestApp } from '../support/harness.js';

export function expectIssue(r: LightMyRequestResponse, loc: (string | number)[], type: string, msg?: RegExp): void {
  expect(r.statusCode, r.body).toBe(422);
  const detail = r.json().detail as { loc: unknown[]; type: string; msg: string }[];
  const hit = detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(hit, `no issue at ${JSON.stringify(loc)} in ${r.body}`).toBeDefined();
  expect(hit!.type).toBe(type);
  if (msg) expect(hit!.msg).toMatch(msg);
}

/** Creates an agent through `t` (org A's key unless `key`) and answers it as the API showed it (test/support/agents.ts). */
export async function createAgent(t: TestApp, body: Record<string, unknown> = {}, key?: string): Promise<Record<string, any>> {
  return postAgent(injectPoster(t.req, key), body);
}

/**
 * Stand-ins for the resolvers other domains register (connections, custom functions, MCP): what exists is
 * registered here per organization, so the agents domain is tested on its own.
 */
export class FakeToolWorld {
  readonly connections = new Map<string, string[]>();
  readonly functions = new Set<string>();

  constructor(private readonly orgId: string) {}

  install(t: TestApp): void {
    const world = this;
    const action: ToolEntryResolver = {
      async resolve(org, entry, loc) {
        const e = entry as { connection_id: string; operation_ids: string[] };
        const ops = org === world.orgId ? world.connections.get(e.connection_id) : undefined;
        if (!ops) throw AppError.invalid([...loc, 'connection_id'], `connection '${e.connection_id}' not found`);
        for (const [i, op] of e.operation_ids.entries()) if (!ops.includes(op)) throw AppError.invalid([...loc, 'operation_ids', i], `operation '${op}' not found`);
        return {
          attached: { id: e.connection_id, operation_ids: e.operation_ids },
          graph: e.operation_ids.map((op) => ({ item_id: `op_${op}`, name: op, type: 'tool', targets: [], settings: { connection_id: e.connection_id } })),
        };
      },
    };
    const customFunction: ToolEntryResolver = {
      async resolve(org, entry, loc) {
        const id = (entry as { custom_function_id: string }).custom_function_id;
        if (org !== world.orgId || !world.functions.has(id)) throw AppError.invalid([...loc, 'custom_function_id'], `custom function '${id}' not found`);
        return { attached: { id: 'service-custom-functions', operation_ids: [id] }, graph: [{ item_id: id, type: 'tool', sub_type: 'custom_function', targets: [] }] };
      },
    };
    const mcp: ToolEntryResolver = {
      async resolve(_org, entry) {
        const e = entry as Record<string, unknown>;
        return { graph: [{ item_id: String(e.url ?? e.mcp_id), name: String(e.name ?? 'mcp'), type: 'mcp', targets: [], settings: { mcp_settings: { url: e.url, api_key: e.api_key, auth_type: e.auth_type ?? 'none' } } }] };
      },
    };
    t.c.toolResolvers.action = action;
    t.c.toolResolvers.custom_function = customFunction;
    t.c.toolResolvers.mcp = mcp;
  }
}
