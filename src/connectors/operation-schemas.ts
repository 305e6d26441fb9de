import type { ValidationIssue } from '../errors.js';
import { LruCache } from './lru-cache.js';
import type { ConnectorsRepository } from './connectors.repository.js';
import type { CatalogOperation } from './openapi/catalog.js';
import type { JsonObject } from './openapi/document.js';
import { buildOperationSchema, type OperationSchema, type RequestPlan } from './openapi/operation-schema.js';
import { RefResolver } from './openapi/refs.js';
import { payloadValidator, type PayloadValidator } from './invoke/payload-validator.js';
import type { SchemaChecker } from '../lib/schema-checker.js';

/**
 * Parsed documents and computed operation schemas, cached (LRU) so that a schema request or an invoke on a 10 MB
 * document parses it once, not per request. Documents are immutable once imported, so entries never go stale;
 * a deleted connector's entries are dropped.
 */

interface ParsedDocument {
  doc: JsonObject;
  resolver: RefResolver;
  size: number;
}

export interface PreparedOperation {
  schema: OperationSchema;
  plan: RequestPlan;
  /** The payload's issues and the payload as validated (coerced); see payload-validator.ts. */
  validate: PayloadValidator;
}

export interface OperationSchemaOptions {
  /** Compiles and runs the operations' input schemas off the main thread. */
  schemaChecker: SchemaChecker;
  /** Schema nodes per `input`/`output` (docs/contract.md#inlining). */
  nodeBudget: number;
  /** Schema nodes of an operation offered to an LLM as a tool (every node costs prompt tokens on every call). */
  toolNodeBudget?: number;
  /** Total source bytes of documents kept parsed. */
  documentCacheBytes?: number;
  /** Total characters of computed schemas kept. */
  schemaCacheChars?: number;
}

const DEFAULT_TOOL_NODE_BUDGET = 1500;

export class OperationSchemas {
  private readonly documents: LruCache<string, ParsedDocument>;
  private readonly schemas: LruCache<string, { prepared: PreparedOperation; weight: number }>;
  private readonly loading = new Map<string, Promise<ParsedDocument | undefined>>();

  constructor(
    private readonly repo: ConnectorsRepository,
    private readonly opts: OperationSchemaOptions,
  ) {
    this.documents = new LruCache(opts.documentCacheBytes ?? 32 * 1024 * 1024, (d) => d.size);
    this.schemas = new LruCache(opts.schemaCacheChars ?? 32 * 1024 * 1024, (s) => s.weight);
  }

  /** Seeds the cache with a document just imported (its first schema request then parses nothing). */
  remember(connectorId: string, doc: JsonObject, size: number): void {
    this.documents.set(connectorId, { doc, resolver: new RefResolver(doc), size });
  }

  get toolBudget(): number {
    return Math.min(this.opts.toolNodeBudget ?? DEFAULT_TOOL_NODE_BUDGET, this.opts.nodeBudget);
  }

  forget(connectorId: string): void {
    this.documents.delete(connectorId);
    this.schemas.deleteWhere((k) => k.startsWith(`${connectorId}\u0000`));
  }

  /** `budget` overrides the configured node budget (LLM tool schemas use a smaller one). */
  async prepare(orgId: string, connectorId: string, op: CatalogOperation, budget = this.opts.nodeBudget): Promise<PreparedOperation | undefined> {
    const key = `${connectorId}\u0000${op.id}\u0000${budget}`;
    const hit = this.schemas.get(key);
    if (hit) return hit.prepared;
    const parsed = await this.document(orgId, connectorId);
    if (!parsed) return undefined;
    const built = buildOperationSchema(parsed.doc, parsed.resolver, op, budget);
    let validator: PayloadValidator | undefined;
    const prepared: PreparedOperation = {
      schema: built.schema,
      plan: built.plan,
      // Compiled on the first invoke only: schema reads never pay for it.
      validate: (payload) => (validator ??= payloadValidator(this.opts.schemaChecker, orgId, built.schema.input))(payload),
    };
    const weight = JSON.stringify(built.schema).length;
    this.schemas.set(key, { prepared, weight });
    return prepared;
  }

  private async document(orgId: string, connectorId: string): Promise<ParsedDocument | undefined> {
    const hit = this.documents.get(connectorId);
    if (hit) return hit;
    // Concurrent first requests share one parse.
    let pending = this.loading.get(connectorId);
    if (!pending) {
      pending = this.repo
        .findDocument(orgId, connectorId)
        .then((text) => {
          if (text === undefined) return undefined;
          const doc = JSON.parse(text) as JsonObject;
          const parsed = { doc, resolver: new RefResolver(doc), size: text.length };
          this.documents.set(connectorId, parsed);
          return parsed;
        })
        .finally(() => this.loading.delete(connectorId));
      this.loading.set(connectorId, pending);
    }
    return pending;
  }
}
