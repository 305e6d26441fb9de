import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { isoTime } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { REDACTED, type SecretBox } from '../lib/secret-box.js';
import type { ConnectionRecord, ConnectorRecord, ConnectorsRepository } from './connectors.repository.js';
import type { ConnectBody, ImportConnectorBody, ImportConnectorUrlBody, SecurityConfig } from './connectors.schemas.js';
import { maskSecurity } from './invoke/security.js';
import type { CatalogOperation } from './openapi/catalog.js';
import type { DocumentLoader } from './openapi/document-loader.js';
import type { OperationSchema } from './openapi/operation-schema.js';
import type { OperationSchemas, PreparedOperation } from './operation-schemas.js';
import type { OpenApiDocumentFetcher } from './openapi/document-fetcher.js';

/**
 * Connectors (imported OpenAPI documents), their connections and the operation catalog (docs/contract.md#connectors).
 */

export const DEFAULT_TIMEOUT_MS = 30_000;

/** `_` in place of a connector id: resolve the connector from the connection (spec 4.2). */
export const ANY_CONNECTOR = '_';

export interface ConnectorView {
  id: string;
  name: string;
  description: string;
  version: string;
  openapi_version: string;
  total_operations: number;
  server_url: string | null;
  created_at: string;
}

export interface ConnectionView {
  id: string;
  connector_id: string;
  name: string;
  base_url: string | null;
  security: Record<string, unknown> | null;
  headers: Record<string, string>;
  general_params: Record<string, string>;
  timeout_seconds: number;
  created_at: string;
}

/**
 * An operation as the catalog lists it (docs/contract.md#operation-catalog); `presentOperation` copies exactly these
 * fields.
 */
export type OperationView = CatalogOperation;

/** A connection with its secrets opened, for the invoker only. */
export interface OpenConnection {
  record: ConnectionRecord;
  connector: ConnectorRecord;
  security: SecurityConfig | null;
  headers: Record<string, string>;
  generalParams: Record<string, string | number | boolean>;
}

export class ConnectorsService {
  constructor(
    private readonly repo: ConnectorsRepository,
    private readonly schemas: OperationSchemas,
    /** Parses imported documents off the event loop. */
    private readonly documents: DocumentLoader,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
    /** Imports by URL; absent where nothing may be fetched. */
    private readonly fetcher?: OpenApiDocumentFetcher,
  ) {}

  /** Import by URL: the fetched text goes through the same loader; a parse problem names `url`, where it came from. */
  async importFromUrl(orgId: string, body: ImportConnectorUrlBody, signal?: AbortSignal): Promise<ConnectorView> {
    if (!this.fetcher) throw new AppError('unavailable', 'Importing by URL is not available');
    const { text, size } = await this.fetcher.fetchText(body.url, signal);
    try {
      return await this.importConnector(orgId, { name: body.name, description: body.description, openapi: text }, size);
    } catch (e) {
      if (e instanceof AppError && e.code === 'validation') {
        throw AppError.validation((e.issues ?? []).map((i) => (i.loc[1] === 'openapi' ? { ...i, loc: ['body', 'url', ...i.loc.slice(2)] } : i)));
      }
      throw e;
    }
  }

  async importConnector(orgId: string, body: ImportConnectorBody, sourceSize?: number): Promise<ConnectorView> {
    const loaded = await this.documents.load(orgId, body.openapi);
    const { operations, text } = loaded;
    const record: ConnectorRecord = {
      id: newId(),
      organizationId: orgId,
      name: body.name,
      description: body.description ?? '',
      version: loaded.apiVersion,
      openapiVersion: loaded.sourceVersion,
      serverUrl: loaded.serverUrl,
      totalOperations: operations.length,
      createdAt: this.clock.now(),
    };
    await this.repo.insertConnector(record, text, sourceSize ?? text.length, operations);
    this.schemas.remember(record.id, loaded.document, text.length);
    return presentConnector(record);
  }

  async list(orgId: string, page: number, perPage: number) {
    const { items, total } = await this.repo.listConnectors(orgId, (page - 1) * perPage, perPage);
    return { items: items.map(presentConnector), total };
  }

  async get(orgId: string, id: string): Promise<ConnectorView> {
    return presentConnector(await this.connector(orgId, id));
  }

  async delete(orgId: string, id: string): Promise<void> {
    if (!(await this.repo.deleteConnector(orgId, id))) throw AppError.notFound('Connector');
    this.schemas.forget(id);
  }

  async connect(orgId: string, connectorId: string, body: ConnectBody): Promise<ConnectionView> {
    const connector = await this.connector(orgId, connectorId);
    const baseUrl = body.base_url?.replace(/\/+$/, '') ?? null;
    if (!baseUrl && !(connector.serverUrl && /^https?:\/\//i.test(connector.serverUrl))) {
      throw AppError.invalid(['body', 'base_url'], "base_url is required: the document's server URL is missing or relative");
    }
    const record: ConnectionRecord = {
      id: newId(),
      organizationId: orgId,
      connectorId,
      name: body.name,
      baseUrl,
      sealedSecurity: body.security ? this.secretBox.sealJson(body.security) : null,
      sealedHeaders: body.headers && Object.keys(body.headers).length ? this.secretBox.sealJson(body.headers) : null,
      sealedGeneralParams: body.general_params && Object.keys(body.general_params).length ? this.secretBox.sealJson(body.general_params) : null,
      timeoutMs: body.timeout_seconds ? Math.round(body.timeout_seconds * 1000) : DEFAULT_TIMEOUT_MS,
      createdAt: this.clock.now(),
    };
    await this.repo.insertConnection(record);
    return this.presentConnection(record);
  }

  async listConnections(orgId: string, connectorId: string, page: number, perPage: number): Promise<{ items: ConnectionView[]; total: number }> {
    await this.connector(orgId, connectorId);
    const { items, total } = await this.repo.listConnections(orgId, connectorId, (page - 1) * perPage, perPage);
    return { items: items.map((r) => this.presentConnection(r)), total };
  }

  async deleteConnection(orgId: string, connectorId: string, id: string): Promise<void> {
    if (!(await this.repo.deleteConnection(orgId, connectorId, id))) throw AppError.notFound('Connection');
  }

  /** The connection, checked against the connector named in the path (`_`: any). */
  async connection(orgId: string, connectorId: string, connectionId: string): Promise<ConnectionRecord> {
    const conn = await this.repo.findConnection(orgId, connectionId);
    if (!conn || (connectorId !== ANY_CONNECTOR && conn.connectorId !== connectorId)) throw AppError.notFound('Connection');
    return conn;
  }

  async operations(orgId: string, connectorId: string, opts: { connectionId?: string; query?: string }): Promise<OperationView[]> {
    let id = connectorId;
    if (opts.connectionId) id = (await this.connection(orgId, connectorId, opts.connectionId)).connectorId;
    else if (connectorId === ANY_CONNECTOR) throw AppError.invalid(['query', 'connection_id'], 'connection_id is required when the connector id is "_"');
    await this.connector(orgId, id);
    return (await this.repo.listOperations(orgId, id, opts.query)).map(presentOperation);
  }

  /** GET .../{operation_id}/schema (spec 4.2). */
  async operationSchema(orgId: string, connectorId: string, connectionId: string, operationId: string): Promise<OperationSchema> {
    const conn = await this.connection(orgId, connectorId, connectionId);
    return (await this.prepared(orgId, conn.connectorId, operationId)).schema;
  }

  /** The operation's schema, request plan and payload validator (cached). */
  async prepared(orgId: string, connectorId: string, operationId: string, budget?: number): Promise<PreparedOperation & { operation: CatalogOperation }> {
    const op = await this.repo.findOperation(orgId, connectorId, operationId);
    if (!op) throw AppError.notFound('Operation');
    const prepared = await this.schemas.prepare(orgId, connectorId, op, budget);
    if (!prepared) throw AppError.notFound('Operation');
    return { ...prepared, operation: op };
  }

  /**
   * Schema and texts of an operation, for the agents' action tools: built with the smaller tool budget, since the
   * schema is sent with every LLM call (the invoke still validates against the full schema).
   */
  async describeOperation(orgId: string, connectorId: string, operationId: string) {
    const p = await this.prepared(orgId, connectorId, operationId, this.schemas.toolBudget);
    return { schema: p.schema, summary: p.operation.summary, description: p.operation.description };
  }

  /** Looks an operation up without building its schema (tool resolution at agent create time). */
  findOperation(orgId: string, connectorId: string, idOrOperationId: string): Promise<CatalogOperation | undefined> {
    return this.repo.findOperation(orgId, connectorId, idOrOperationId);
  }

  findConnection(orgId: string, connectionId: string): Promise<ConnectionRecord | undefined> {
    return this.repo.findConnection(orgId, connectionId);
  }

  /** Opens the connection's sealed settings; only the invoker calls this. */
  async openConnection(orgId: string, connectorId: string, connectionId: string): Promise<OpenConnection> {
    const record = await this.connection(orgId, connectorId, connectionId);
    const connector = await this.connector(orgId, record.connectorId);
    return {
      record,
      connector,
      security: record.sealedSecurity ? this.secretBox.openJson<SecurityConfig>(record.sealedSecurity) : null,
      headers: record.sealedHeaders ? this.secretBox.openJson<Record<string, string>>(record.sealedHeaders) : {},
      generalParams: record.sealedGeneralParams ? this.secretBox.openJson<Record<string, string | number | boolean>>(record.sealedGeneralParams) : {},
    };
  }

  private async connector(orgId: string, id: string): Promise<ConnectorRecord> {
    const c = await this.repo.findConnector(orgId, id);
    if (!c) throw AppError.notFound('Connector');
    return c;
  }

  private presentConnection(r: ConnectionRecord): ConnectionView {
    const mask = (sealed: string | null) =>
      sealed ? Object.fromEntries(Object.keys(this.secretBox.openJson<Record<string, unknown>>(sealed)).map((k) => [k, REDACTED])) : {};
    return {
      id: r.id,
      connector_id: r.connectorId,
      name: r.name,
      base_url: r.baseUrl,
      security: r.sealedSecurity ? maskSecurity(this.secretBox.openJson<SecurityConfig>(r.sealedSecurity)) : null,
      headers: mask(r.sealedHeaders),
      general_params: mask(r.sealedGeneralParams),
      timeout_seconds: r.timeoutMs / 1000,
      created_at: isoTime(r.createdAt),
    };
  }
}

function presentConnector(c: ConnectorRecord): ConnectorView {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    version: c.version,
    openapi_version: c.openapiVersion,
    total_operations: c.totalOperations,
    server_url: c.serverUrl,
    created_at: isoTime(c.createdAt),
  };
}

function presentOperation(o: CatalogOperation): OperationView {
  return { id: o.id, operationId: o.operationId, path: o.path, method: o.method, summary: o.summary, description: o.description, tags: o.tags };
}
