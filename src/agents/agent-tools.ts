import { AppError } from '../errors.js';
import { newId } from '../lib/ids.js';
import type { AttachedConnector, GraphItem, ResolvedToolEntry } from '../tools/tool-kinds.js';
import { CUSTOM_FUNCTIONS_CONNECTOR_ALIASES, CUSTOM_FUNCTIONS_CONNECTOR_ID, type ToolEntry } from './agent.schemas.js';
import type { ToolResolverRegistry } from './tool-resolvers/index.js';
import { checkGraphItems } from './graph-item-rules.js';

/** Knowledge bases attached to an agent, and the documents it is limited to, must exist; provided by the knowledge-base domain (issue 7). */
export interface KnowledgeBaseLookup {
  exists(organizationId: string, knowledgeBaseId: string): Promise<boolean>;
  /** The ids among `documentIds` that are not documents of that knowledge base in the organization. */
  missingDocuments(organizationId: string, knowledgeBaseId: string, documentIds: string[]): Promise<string[]>;
}

type Loc = (string | number)[];

export interface ToolsInput {
  /** `tools` entries of this request: resolved and merged on top. */
  tools: ToolEntry[];
  /** `attached_tools` given in this request (validated, graph items created for them); undefined: keep `baseAttached`. */
  explicitAttached?: AttachedConnector[];
  baseAttached: AttachedConnector[];
  graph: GraphItem[];
  /** Check the items of `graph` by kind (it was given in this request): graph-item-rules.ts. */
  validateGraph: boolean;
  knowledgeBases: { id: string; documents?: string[] }[];
  /** Top-level `skills` of this request: each resolved like a `{type:"skill"}` tool entry, merged on top. */
  skills?: { name?: string; skill_name?: string }[];
}

/**
 * Spec 2.3-2.4: validates every reference against the organization and produces the final `attached_tools` and
 * `graph`. Order: explicit attached_tools (each routed through its resolver), explicit graph, then `tools` merged on top.
 */
export class AgentToolsResolver {
  /** Without a lookup every knowledge-base id is unknown. */
  constructor(
    private readonly registry: ToolResolverRegistry,
    private readonly kbLookup?: KnowledgeBaseLookup,
  ) {}

  async resolveEntry(organizationId: string, entry: ToolEntry, loc: Loc, selfId?: string): Promise<ResolvedToolEntry> {
    if (entry.type === 'agent' && selfId && entry.agent_id === selfId) {
      throw AppError.invalid([...loc, 'agent_id'], 'an agent cannot be its own sub-agent');
    }
    const resolver = this.registry[entry.type];
    if (!resolver) throw AppError.invalid(loc, `tool type '${entry.type}' is not available`);
    return resolver.resolve(organizationId, entry as unknown as Record<string, unknown>, loc);
  }

  async resolve(organizationId: string, input: ToolsInput, loc: Loc, selfId?: string): Promise<{ attached_tools: AttachedConnector[]; graph: GraphItem[] }> {
    let attached = input.baseAttached.map((c) => ({ id: c.id, operation_ids: [...c.operation_ids] }));
    let graph = input.graph.map((g) => ({ ...g }));

    if (input.validateGraph) {
      // Name the graph item's field, not the tool entry's.
      await checkGraphItems(graph, loc, (entry, at, field) =>
        this.resolveEntry(organizationId, entry, at, selfId).then(
          () => undefined,
          (e: unknown) => {
            if (e instanceof AppError && e.issues) e.issues[0].loc = [...at, field];
            throw e;
          },
        ),
      );
    }

    if (input.explicitAttached) {
      attached = [];
      for (const [i, conn] of input.explicitAttached.entries()) {
        const resolved = await this.resolveAttached(organizationId, conn, [...loc, 'attached_tools', i]);
        for (const r of resolved) {
          if (r.attached) attached = mergeAttached(attached, r.attached);
          // Graph items are created for attached tools only where the graph has none for them.
          graph = mergeGraph(graph, r.graph, false);
        }
        if (resolved.every((r) => !r.attached)) attached = mergeAttached(attached, normalizeConnector(conn));
      }
    }

    for (const [i, entry] of input.tools.entries()) {
      const r = await this.resolveEntry(organizationId, entry, [...loc, 'tools', i], selfId);
      if (r.attached) attached = mergeAttached(attached, r.attached);
      graph = mergeGraph(graph, r.graph, true);
    }

    for (const [i, skill] of (input.skills ?? []).entries()) {
      const key = skill.name ? 'name' : 'skill_name';
      const at = [...loc, 'skills', i];
      const r = await this.resolveEntry(organizationId, { type: 'skill', skill_name: skill.name ?? skill.skill_name ?? '' }, at).catch((e: unknown) => {
        if (e instanceof AppError && e.issues) e.issues[0].loc = [...at, key];
        throw e;
      });
      graph = mergeGraph(graph, r.graph, true);
    }

    for (const [i, kb] of input.knowledgeBases.entries()) {
      const found = this.kbLookup ? await this.kbLookup.exists(organizationId, kb.id) : false;
      if (!found) throw AppError.invalid([...loc, 'knowledge_bases', i, 'id'], `knowledge base '${kb.id}' not found`);
      await this.checkDocuments(organizationId, kb, [...loc, 'knowledge_bases', i, 'documents']);
    }

    if (input.validateGraph) {
      await this.checkOperationItems(organizationId, input.graph, attached, loc);
      checkTargets(graph, loc);
    }
    return { attached_tools: attached, graph: graph.map((g) => ({ ...g, id: g.id ?? newId() })) };
  }

  /**
   * `documents` limits the agent's searches of that knowledge base to those documents: each must be one of its
   * documents now (every unknown one named in one 422), so a typo cannot silently leave the agent with nothing.
   */
  private async checkDocuments(organizationId: string, kb: { id: string; documents?: string[] }, loc: Loc): Promise<void> {
    const docs = kb.documents ?? [];
    if (!docs.length || !this.kbLookup) return;
    const missing = new Set(await this.kbLookup.missingDocuments(organizationId, kb.id, docs));
    const issues = docs.flatMap((d, j) =>
      missing.has(d) ? [{ loc: [...loc, j], msg: `Value error, document '${d}' not found in knowledge base '${kb.id}'`, type: 'value_error' }] : [],
    );
    if (issues.length) throw AppError.validation(issues);
  }

  /**
   * Explicit `tool` items (connector operations, sub_type null): the runtime offers only operations of
   * `attached_tools`, so an item naming another operation would offer nothing. item_id is the operationId (or the
   * catalog id) of an operation of an attached connection.
   */
  private async checkOperationItems(organizationId: string, explicit: GraphItem[], attached: AttachedConnector[], loc: Loc): Promise<void> {
    const items = explicit.map((g, i) => [g, i] as const).filter(([g]) => g.type === 'tool' && !g.sub_type);
    if (!items.length) return;
    const known = new Set<string>();
    for (const conn of attached) {
      if (CUSTOM_FUNCTIONS_CONNECTOR_ALIASES.has(conn.id)) continue;
      for (const op of conn.operation_ids) known.add(op);
      // A connection or operation removed since it was attached names nothing: it adds no operation.
      const resolved = await this.resolveAttached(organizationId, conn, loc).catch(() => []);
      for (const r of resolved) for (const g of r.graph) known.add(g.item_id);
    }
    for (const [g, i] of items) {
      if (!known.has(g.item_id)) {
        throw AppError.invalid([...loc, 'graph', i, 'item_id'], `operation '${g.item_id}' is not in attached_tools: attach it (attached_tools or tools:[{type:"action"}]) so the item has a tool to offer`);
      }
    }
  }

  private async resolveAttached(organizationId: string, conn: AttachedConnector, loc: Loc): Promise<ResolvedToolEntry[]> {
    if (CUSTOM_FUNCTIONS_CONNECTOR_ALIASES.has(conn.id)) {
      const out: ResolvedToolEntry[] = [];
      for (const [j, fn] of conn.operation_ids.entries()) {
        out.push(await this.resolveEntry(organizationId, { type: 'custom_function', custom_function_id: fn }, [...loc, 'operation_ids', j]));
      }
      return out;
    }
    return [await this.resolveEntry(organizationId, { type: 'action', connection_id: conn.id, operation_ids: conn.operation_ids }, loc)];
  }
}

/** Spec 2.4: `targets` are ids of items to run after this one; each must name an item of the graph (its id or item_id). */
function checkTargets(graph: GraphItem[], loc: Loc): void {
  const known = new Set(graph.flatMap((g) => (g.id ? [g.id, g.item_id] : [g.item_id])));
  for (const [i, g] of graph.entries()) {
    for (const [j, t] of (g.targets ?? []).entries()) {
      if (!known.has(t)) throw AppError.invalid([...loc, 'graph', i, 'targets', j], `target '${t}' is not the id or item_id of an item of this graph`);
    }
  }
}

function normalizeConnector(c: AttachedConnector): AttachedConnector {
  return { id: CUSTOM_FUNCTIONS_CONNECTOR_ALIASES.has(c.id) ? CUSTOM_FUNCTIONS_CONNECTOR_ID : c.id, operation_ids: [...c.operation_ids] };
}

export function mergeAttached(list: AttachedConnector[], add: AttachedConnector): AttachedConnector[] {
  const c = normalizeConnector(add);
  const i = list.findIndex((x) => x.id === c.id);
  if (i < 0) return [...list, c];
  const out = [...list];
  out[i] = { id: c.id, operation_ids: [...new Set([...list[i].operation_ids, ...c.operation_ids])] };
  return out;
}

const sameItem = (a: GraphItem, b: GraphItem) => a.type === b.type && a.item_id === b.item_id && (a.sub_type ?? null) === (b.sub_type ?? null);

/** `onTop`: a resolved item replaces an existing one for the same thing (keeping its id); otherwise it is only added when absent. */
export function mergeGraph(list: GraphItem[], add: GraphItem[], onTop: boolean): GraphItem[] {
  const out = [...list];
  for (const item of add) {
    const normalized: GraphItem = { id: item.id ?? null, item_id: item.item_id, name: item.name ?? null, type: item.type, sub_type: item.sub_type ?? null, targets: item.targets ?? [], settings: item.settings ?? null, is_first: item.is_first ?? false };
    const i = out.findIndex((g) => sameItem(g, normalized));
    if (i < 0) out.push(normalized);
    else if (onTop) {
      // A resolved `tools` entry brings the tool's definition, never chaining (resolvers declare no targets): the
      // targets and is_first already declared for that item stay.
      const kept = out[i];
      out[i] = {
        ...normalized,
        id: normalized.id ?? kept.id ?? null,
        targets: normalized.targets.length ? normalized.targets : kept.targets ?? [],
        is_first: normalized.is_first || kept.is_first === true,
      };
    }
  }
  return out;
}

export interface ToolSet {
  tools: ToolEntry[];
  attached_tools: AttachedConnector[];
  graph: GraphItem[];
  skills: Record<string, unknown>[];
}

const ENTRY_REFS = ['connection_id', 'custom_function_id', 'mcp_id', 'agent_id', 'workflow_id', 'skill_name'] as const;

/**
 * `DELETE /v1/agents/{id}/tools/{tool_id}`: `tool_id` may be a graph item's id or item_id, a connection id, an
 * operation id, a custom function id, an agent id, an MCP registry id or a skill name. Everything that refers to it
 * goes: graph items, the attached connector or operation, the `tools` entries and skills naming it.
 */
export function removeTool(set: ToolSet, toolId: string): { set: ToolSet; removed: boolean } {
  let removed = false;
  const connector = set.attached_tools.find((c) => c.id === toolId);
  const goneOps = new Set(connector?.operation_ids ?? []);
  goneOps.add(toolId);

  const attached: AttachedConnector[] = [];
  for (const c of set.attached_tools) {
    if (c.id === toolId) {
      removed = true;
    } else if (c.operation_ids.includes(toolId)) {
      removed = true;
      const ops = c.operation_ids.filter((o) => o !== toolId);
      if (ops.length) attached.push({ id: c.id, operation_ids: ops });
    } else attached.push(c);
  }

  const gone = new Set<string>();
  const kept = set.graph.filter((g) => {
    const settings = (g.settings ?? {}) as Record<string, unknown>;
    const hit = g.id === toolId || g.item_id === toolId || (g.type === 'tool' && goneOps.has(g.item_id) && !!connector) || settings.connection_id === toolId || settings.mcp_id === toolId;
    if (hit) {
      removed = true;
      gone.add(g.item_id);
      if (g.id) gone.add(g.id);
    }
    return !hit;
  });
  // Chaining to a removed item would name nothing: those targets go with it.
  const graph = gone.size ? kept.map((g) => ({ ...g, targets: (g.targets ?? []).filter((t) => !gone.has(t)) })) : kept;

  const tools: ToolEntry[] = [];
  for (const e of set.tools) {
    const rec = e as unknown as Record<string, unknown>;
    if (ENTRY_REFS.some((k) => rec[k] === toolId)) {
      removed = true;
      continue;
    }
    if (e.type === 'action' && e.operation_ids.includes(toolId)) {
      removed = true;
      const ops = e.operation_ids.filter((o) => o !== toolId);
      if (ops.length) tools.push({ ...e, operation_ids: ops });
      continue;
    }
    tools.push(e);
  }

  const skills = set.skills.filter((s) => {
    const hit = s.name === toolId || s.skill_name === toolId || s.id === toolId;
    if (hit) removed = true;
    return !hit;
  });
  return { set: { tools, attached_tools: attached, graph, skills }, removed };
}
