import type { ToolResolverRegistry } from '../agents/tool-resolvers/index.js';
import { ActionToolResolver } from '../agents/tool-resolvers/action.resolver.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import { closeOnStop, type Startable } from '../lib/lifecycle.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { SafeFetch } from '../net/index.js';
import type { Runtime } from '../runtime/runtime.js';
import { ActionToolProvider } from '../runtime/tools/action.tools.js';
import { ConnectorsRepository } from './connectors.repository.js';
import { ConnectorsService } from './connectors.service.js';
import { OAuthTokenCache } from './invoke/oauth-token-cache.js';
import { OperationInvoker } from './invoke/operation-invoker.js';
import { OpenApiDocumentFetcher } from './openapi/document-fetcher.js';
import { DocumentLoader } from './openapi/document-loader.js';
import { OperationSchemas } from './operation-schemas.js';

export interface ConnectorsModule {
  connectors: ConnectorsService;
  invoker: OperationInvoker;
  /** Closes the OpenAPI document loader's worker when the process stops. */
  loader: Startable;
}

/**
 * Connectors (issue 5): imported OpenAPI documents, connections, operation schemas, invoking operations; the `action`
 * tool kind (create-time resolver and run-time provider).
 */
export function createConnectorsModule(d: {
  db: Db;
  config: Config;
  clock: Clock;
  secretBox: SecretBox;
  safeFetch: SafeFetch;
  schemaChecker: SchemaChecker;
  toolResolvers: ToolResolverRegistry;
  runtime: Runtime;
}): ConnectorsModule {
  const repo = new ConnectorsRepository(d.db);
  const documentLoader = new DocumentLoader();
  const operationSchemas = new OperationSchemas(repo, { nodeBudget: d.config.schemaNodeBudget, schemaChecker: d.schemaChecker });
  const fetcher = new OpenApiDocumentFetcher(d.safeFetch, { maxBytes: d.config.files.maxFileBytes, timeoutMs: 30_000 });
  const connectors = new ConnectorsService(repo, operationSchemas, documentLoader, d.secretBox, d.clock, fetcher);
  const invoker = new OperationInvoker(connectors, d.safeFetch, new OAuthTokenCache(d.clock), d.clock);
  d.toolResolvers.action = new ActionToolResolver(connectors);
  d.runtime.tools.register(
    'action',
    new ActionToolProvider({
      findConnection: (org, id) => connectors.findConnection(org, id),
      describeOperation: (org, connectorId, opId) => connectors.describeOperation(org, connectorId, opId),
      invoke: (target, payload, signal) => invoker.invoke(target, payload, signal),
    }),
  );
  return { connectors, invoker, loader: closeOnStop(() => documentLoader.close()) };
}
