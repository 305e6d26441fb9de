import { AppError } from '../../errors.js';
import type { GraphItem, ResolvedToolEntry, ToolEntryResolver } from '../../tools/tool-kinds.js';

/** What the resolver needs from the connectors domain. */
export interface ConnectorOperationLookup {
  findConnection(organizationId: string, connectionId: string): Promise<{ id: string; connectorId: string } | undefined>;
  findOperation(
    organizationId: string,
    connectorId: string,
    idOrOperationId: string,
  ): Promise<{ id: string; operationId: string; summary: string | null } | undefined>;
}

/**
 * `{type:"action", connection_id, operation_ids}` -> an attached_tools entry `{id: connection_id, operation_ids}`
 * (catalog ids) plus one graph item of type `tool` per operation whose item_id is the operationId (spec 2.3-2.4).
 * Operations may be named by catalog id or by operationId; the connection and every operation must exist in the
 * organization, else 422 naming the entry.
 */
export class ActionToolResolver implements ToolEntryResolver<{ connection_id: string; operation_ids: string[] }> {
  constructor(private readonly connectors: ConnectorOperationLookup) {}

  async resolve(organizationId: string, entry: { connection_id: string; operation_ids: string[] }, loc: (string | number)[]): Promise<ResolvedToolEntry> {
    const conn = await this.connectors.findConnection(organizationId, entry.connection_id);
    if (!conn) throw AppError.invalid([...loc, 'connection_id'], `connection '${entry.connection_id}' not found`);
    const ids: string[] = [];
    const graph: GraphItem[] = [];
    for (const [j, ref] of entry.operation_ids.entries()) {
      const op = await this.connectors.findOperation(organizationId, conn.connectorId, ref);
      if (!op) throw AppError.invalid([...loc, 'operation_ids', j], `operation '${ref}' not found in connection '${entry.connection_id}'`);
      if (ids.includes(op.id)) continue;
      ids.push(op.id);
      graph.push({
        item_id: op.operationId,
        name: op.summary || op.operationId,
        type: 'tool',
        sub_type: null,
        targets: [],
        settings: { connection_id: conn.id, operation_id: op.id },
        is_first: false,
      });
    }
    return { attached: { id: conn.id, operation_ids: ids }, graph };
  }
}
