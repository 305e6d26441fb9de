import type { AgentView } from '../agents/agent.presenter.js';
import { CUSTOM_FUNCTIONS_CONNECTOR_ALIASES, type CreateAgentInput, type PatchAgentInput } from '../agents/agent.schemas.js';
import type { Principal } from '../auth/principal.js';
import type { AgentsService } from '../agents/agents.service.js';
import type { ConnectorsService } from '../connectors/connectors.service.js';
import type { InvokeResult, OperationInvoker } from '../connectors/invoke/operation-invoker.js';
import type { InvokePayload } from '../connectors/invoke/request-builder.js';
import { AppError } from '../errors.js';
import { presentXpanderAgent, presentXpanderAgentListItem, type XpanderTool } from './agent.presenter.js';

/** GET /agents/list is a bare array: read in pages of the service's size, up to this many agents. */
const LIST_PAGE = 50;
const LIST_MAX = 5_000;

/** A tool of the agent with the connection that runs it (not shown: the SDK's Tool has no connection). */
interface AgentOperation {
  tool: XpanderTool;
  connectionId: string;
}

/**
 * xpander's agent and tool routes over the agents and connectors services: the published agent in the SDK's types,
 * its connector operations as the SDK's tool definitions, and invoking them through the same invoker as
 * POST /v1/tools/connectors/.../invoke.
 */
export class XpanderAgents {
  constructor(
    private readonly agents: AgentsService,
    private readonly connectors: ConnectorsService,
    private readonly invoker: OperationInvoker,
  ) {}

  /** Every agent the caller may see (personal agents of others are left out, as on /v1). */
  async list(viewer: Principal): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (let page = 1; out.length < LIST_MAX; page++) {
      const { items, total_pages } = await this.agents.listFull(viewer, page, LIST_PAGE);
      out.push(...items.map(presentXpanderAgentListItem));
      if (page >= total_pages) break;
    }
    return out;
  }

  /** GET /agents/{id}: the published version (or the one `x-agent-version` names) with its tool definitions. */
  async get(organizationId: string, agentId: string, version?: number): Promise<Record<string, unknown>> {
    return this.present(organizationId, await this.published(organizationId, agentId, version));
  }

  // ---- the CLI's CRUD: the agents service's use cases, answered as the SDK's agent with its tool definitions

  async create(principal: Principal, input: CreateAgentInput): Promise<Record<string, unknown>> {
    return this.present(principal.organizationId, await this.agents.create(principal, input));
  }

  /** Staged as a draft unless the agent's staging is off, exactly as PATCH /v1/agents/{id}. */
  async update(principal: Principal, agentId: string, patch: PatchAgentInput): Promise<Record<string, unknown>> {
    return this.present(principal.organizationId, await this.agents.update(principal, agentId, patch, { deploy: false }));
  }

  async deploy(organizationId: string, agentId: string): Promise<Record<string, unknown>> {
    return this.present(organizationId, await this.agents.deploy(organizationId, agentId));
  }

  /**
   * POST /agents/{agent_id}/operations/{tool_id}. With `preflight` (the SDK's `x-preflight-check`) nothing runs:
   * Agentry has no graph ordering to enforce, so a known agent answers `{}` (no `error`) for any tool, local ones too.
   */
  async invokeTool(organizationId: string, agentId: string, toolId: string, version: number | undefined, payload: InvokePayload, preflight: boolean, signal?: AbortSignal): Promise<InvokeResult | Record<string, never>> {
    const view = await this.published(organizationId, agentId, version);
    if (preflight) return {};
    const op = (await this.operations(organizationId, view)).find((o) => o.tool.id === toolId);
    if (!op) throw AppError.notFound('Tool');
    return this.invoker.invoke({ organizationId, connectorId: op.tool.connector_id, connectionId: op.connectionId, operationId: op.tool.operation_id }, payload, signal);
  }

  /** GET /tools/{connector_id}_{operation_id}: the SDK adds method and path itself, so they are not sent. */
  async standaloneTool(organizationId: string, ref: string): Promise<Record<string, unknown>> {
    const { connectorId, operationId } = splitRef(ref);
    const { schema, summary, description } = await this.connectors.describeOperation(organizationId, connectorId, operationId);
    return { id: `${connectorId}_${schema.id}`, name: schema.operationId, description: describe(summary, description, schema.method, schema.path), parameters: schema.input };
  }

  /** POST /tools/{connector_id}_{operation_id}: through `connection_id`, or the connector's only connection. */
  async invokeStandalone(organizationId: string, ref: string, connectionId: string | undefined, payload: InvokePayload, signal?: AbortSignal): Promise<InvokeResult> {
    const { connectorId, operationId } = splitRef(ref);
    let connection = connectionId;
    if (!connection) {
      const { items, total } = await this.connectors.listConnections(organizationId, connectorId, 1, 2);
      if (total !== 1) throw AppError.invalid(['query', 'connection_id'], total === 0 ? 'The connector has no connection: create one with POST /v1/connectors/{id}/connect' : 'The connector has several connections: name one with ?connection_id=');
      connection = items[0].id;
    }
    return this.invoker.invoke({ organizationId, connectorId, connectionId: connection, operationId }, payload, signal);
  }

  /** The CLI's search-interfaces: the organization's connectors, filtered by a phrase in name or description. */
  async searchInterfaces(organizationId: string, phrase: string): Promise<Record<string, unknown>[]> {
    const needle = phrase.trim().toLowerCase();
    const out: Record<string, unknown>[] = [];
    for (let page = 1; out.length < LIST_MAX; page++) {
      const { items, total } = await this.connectors.list(organizationId, page, LIST_PAGE);
      for (const c of items) {
        if (needle && !`${c.name} ${c.description ?? ''}`.toLowerCase().includes(needle)) continue;
        out.push({ id: c.id, name: c.name, description: c.description ?? '', type: 'interface', total_operations: c.total_operations, server_url: c.server_url, created_at: c.created_at });
      }
      if (page * LIST_PAGE >= total) break;
    }
    return out;
  }

  /** The CLI's search-operations: operations of the named connectors (`asset_id`), optionally searched. */
  async searchOperations(organizationId: string, connectorIds: string[], query: string): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (const connectorId of connectorIds) {
      for (const op of await this.connectors.operations(organizationId, connectorId, { query: query || undefined })) {
        out.push({
          id: op.id,
          name: op.operationId,
          summary: op.summary ?? '',
          description: op.description ?? '',
          // What a `tools` entry of an agent names (operation_ids accept the catalog id or the operationId).
          id_to_use_on_graph: op.operationId,
          parent_id: connectorId,
          is_function: false,
          method: op.method,
          path: op.path,
        });
      }
    }
    return out;
  }

  private async present(organizationId: string, view: AgentView): Promise<Record<string, unknown>> {
    return presentXpanderAgent(view, (await this.operations(organizationId, view)).map((o) => o.tool));
  }

  private async published(organizationId: string, agentId: string, version?: number): Promise<AgentView> {
    if (version !== undefined) return this.agents.getVersion(organizationId, agentId, version);
    const view = await this.agents.get(organizationId, agentId);
    // GET /v1 shows a pending draft; the SDK runs the agent, so it gets what invocations run: the published version.
    return view.has_pending_changes ? this.agents.getVersion(organizationId, agentId, Number(view.version)) : view;
  }

  /** The agent's attached connector operations as tool definitions; ids are the graph's item ids (operationId). */
  private async operations(organizationId: string, view: AgentView): Promise<AgentOperation[]> {
    const out: AgentOperation[] = [];
    const taken = new Set<string>();
    for (const attached of (view.attached_tools as { id: string; operation_ids: string[] }[] | null) ?? []) {
      if (CUSTOM_FUNCTIONS_CONNECTOR_ALIASES.has(attached.id)) continue;
      // A connection or operation removed after it was attached is not offered (as in the runtime's action tools).
      const conn = await this.connectors.findConnection(organizationId, attached.id);
      if (!conn) continue;
      for (const opId of attached.operation_ids) {
        const op = await this.connectors.describeOperation(organizationId, conn.connectorId, opId).catch((e: unknown) => {
          if (e instanceof AppError && e.code === 'not_found') return undefined;
          throw e;
        });
        if (!op) continue;
        let id = op.schema.operationId;
        for (let i = 2; taken.has(id); i++) id = `${op.schema.operationId}_${i}`;
        taken.add(id);
        out.push({
          connectionId: conn.id,
          tool: {
            id,
            name: op.schema.operationId,
            method: op.schema.method.toUpperCase(),
            path: op.schema.path,
            description: describe(op.summary, op.description, op.schema.method, op.schema.path),
            parameters: op.schema.input,
            connector_id: conn.connectorId,
            operation_id: op.schema.id,
            is_local: false,
            should_add_to_graph: false,
          },
        });
      }
    }
    return out;
  }
}

function describe(summary: string | null, description: string | null, method: string, path: string): string {
  const text = [summary, description].filter((s): s is string => !!s && s.trim() !== '').join('\n\n');
  return text || `${method.toUpperCase()} ${path}`;
}

/** `{connector_id}_{operation_id}`: connector ids are UUIDs, so the first `_` separates them. */
function splitRef(ref: string): { connectorId: string; operationId: string } {
  const i = ref.indexOf('_');
  if (i <= 0 || i === ref.length - 1) throw AppError.notFound('Tool');
  return { connectorId: ref.slice(0, i), operationId: ref.slice(i + 1) };
}
