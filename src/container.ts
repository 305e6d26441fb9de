import { join } from 'node:path';
import type { Config } from './config.js';
import { openDatabase, type Db } from './db/database.js';
import { migrate } from './db/migrate.js';
import { ensurePrivateDir } from './lib/private-files.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createLogger, type Logger } from './lib/logger.js';
import { resolveMasterKey } from './lib/master-key.js';
import { SecretBox } from './lib/secret-box.js';
import { PublicUrls } from './lib/urls.js';
import { AuthService } from './auth/auth.service.js';
import { ApiKeysService } from './auth/api-keys.service.js';
import { RateBucketsRepository } from './auth/rate-buckets.repository.js';
import { RateLimiter, RateLimits } from './auth/rate-limiter.js';
import { PreAuthService } from './auth/pre-auth.service.js';
import { OrgsRepository } from './orgs/orgs.repository.js';
import { OrgsService } from './orgs/orgs.service.js';
import { AgentsRepository } from './agents/agents.repository.js';
import { AgentsService } from './agents/agents.service.js';
import { createToolResolverRegistry, type ToolResolverRegistry } from './agents/tool-resolvers/index.js';
import { SecretsRepository } from './secrets/secrets.repository.js';
import { SecretsService } from './secrets/secrets.service.js';
import { createRuntime, type Runtime } from './runtime/runtime.js';
import { ConnectorsRepository } from './connectors/connectors.repository.js';
import { ConnectorsService } from './connectors/connectors.service.js';
import { OAuthTokenCache } from './connectors/invoke/oauth-token-cache.js';
import { OperationInvoker } from './connectors/invoke/operation-invoker.js';
import { OperationSchemas } from './connectors/operation-schemas.js';
import { ActionToolResolver } from './agents/tool-resolvers/action.resolver.js';
import { ActionToolProvider } from './runtime/tools/action.tools.js';
import type { TaskRunner } from './runtime/task-runner.js';
import { createTasksModule } from './tasks/tasks.module.js';
import type { TasksService } from './tasks/tasks.service.js';
import type { TaskActivityService } from './tasks/task-activity.service.js';
import type { TaskWorker } from './tasks/task.worker.js';
import { DEFAULT_ARCHIVE_LIMITS } from './files/archive.js';
import { createBlobStore } from './files/blob-store.js';
import { FileSigner } from './files/file-signer.js';
import { ExtractionPool } from './files/extraction-pool.js';
import { FilesRepository } from './files/files.repository.js';
import { FilesService } from './files/files.service.js';
import { WebhookChannelsRepository } from './webhooks/webhook-channels.repository.js';
import { WebhookChannelsService } from './webhooks/webhook-channels.service.js';
import { WebhookReceiver } from './webhooks/webhook-receiver.service.js';
import { CustomFunctionsRepository } from './custom-functions/custom-functions.repository.js';
import { CustomFunctionsService } from './custom-functions/custom-functions.service.js';
import { SandboxPool } from './custom-functions/sandbox.js';
import { SchemaChecker } from './lib/schema-checker.js';
import { DocumentLoader } from './connectors/openapi/document-loader.js';
import { OpenApiDocumentFetcher } from './connectors/openapi/document-fetcher.js';
import { McpClientPool } from './mcp/mcp-client-pool.js';
import { McpToolsCatalog } from './mcp/mcp-tools-catalog.js';
import { McpServersRepository } from './mcp/mcp-servers.repository.js';
import { McpServersService } from './mcp/mcp-servers.service.js';
import { McpUserTokensRepository } from './mcp/mcp-user-tokens.repository.js';
import { McpUserTokensService } from './mcp/mcp-user-tokens.service.js';
import { SkillsRepository } from './skills/skills.repository.js';
import { SkillsService } from './skills/skills.service.js';
import { CustomFunctionToolResolver } from './agents/tool-resolvers/custom-function.resolver.js';
import { McpToolResolver } from './agents/tool-resolvers/mcp.resolver.js';
import { SkillToolResolver } from './agents/tool-resolvers/skill.resolver.js';
import { CustomFunctionToolProvider } from './runtime/tools/custom-function.tools.js';
import { McpToolProvider } from './runtime/tools/mcp.tools.js';
import { SkillContext, SkillToolProvider } from './runtime/tools/skill.tools.js';
import { createEgressPolicy, createSafeFetch } from './net/index.js';
import { ChunkStoreRepository } from './knowledge/chunk-store.repository.js';
import { DocumentReader } from './knowledge/document-reader.js';
import { OpenAiCompatibleEmbeddings } from './knowledge/embeddings.js';
import { JobQueueRepository } from './knowledge/job-queue.repository.js';
import { JobWakeups } from './knowledge/job-wakeups.js';
import { KnowledgeContext } from './knowledge/knowledge-context.js';
import { KnowledgeIndexer } from './knowledge/knowledge.indexer.js';
import { KnowledgeRepository } from './knowledge/knowledge.repository.js';
import { KnowledgeService } from './knowledge/knowledge.service.js';
import { XpanderAgents } from './xpander/xpander-agents.js';
import { XpanderTasks } from './xpander/xpander-tasks.js';
import { KnowledgeToolProvider } from './runtime/tools/knowledge.tools.js';
import { SchedulesRepository } from './schedules/schedules.repository.js';
import { SchedulesService } from './schedules/schedules.service.js';
import { ScheduleFiring } from './schedules/schedule-firing.js';
import { ScheduleScheduler } from './schedules/schedule.scheduler.js';
import { ScheduleToolProvider } from './runtime/tools/schedule.tools.js';
import type { MemoryExtractor } from './memory/memory-extractor.js';
import { createMemoryModule } from './memory/memory.module.js';
import type { MemoryService } from './memory/memory.service.js';
import { createNotificationsModule } from './notifications/notifications.module.js';
import type { NotificationsService } from './notifications/notifications.service.js';
import { createObservability, type Observability } from './observability/observability.js';
import { registerExternalAgents } from './external-agents/external-agents.module.js';
import { LazyA2aInbound } from './external-agents/lazy-a2a.js';
import { McpInboundService } from './external-agents/inbound/mcp-inbound.service.js';
import type { Startable } from './lib/lifecycle.js';
import { createWorkflowsModule } from './workflows/workflows.module.js';
import type { WorkflowsService } from './workflows/workflows.service.js';

export type { Startable } from './lib/lifecycle.js';

/**
 * The composition root: every service is built here with plain constructors, and nowhere else.
 * Each domain adds its services in its own section below and its fields to this interface.
 */
export interface Container {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  urls: PublicUrls;
  secretBox: SecretBox;
  orgs: OrgsService;
  auth: AuthService;
  // access (issue 24): key management, rate limits, end-user pre-auth (docs/access.md)
  apiKeys: ApiKeysService;
  rateLimits: RateLimits;
  /** End-user token verification of `use_oidc_pre_auth` agents: `preAuth.verify(agent, headers)` for any transport. */
  preAuth: PreAuthService;
  // agents (issue 2)
  agents: AgentsService;
  /** Create-time resolvers of `tools` entries; each tool-kind section registers its own. */
  toolResolvers: ToolResolverRegistry;
  secrets: SecretsService;
  // connectors (issue 5): imported OpenAPI documents, connections, operation schemas; invoking operations
  connectors: ConnectorsService;
  connectorInvoker: OperationInvoker;
  // runtime (issue 3): the TaskRunner, the run-time tool registry, context contributors, LLM resolution
  runtime: Runtime;
  // files and webhooks (issue 4)
  files: FilesService;
  webhookChannels: WebhookChannelsService;
  webhooks: WebhookReceiver;
  // tool kinds (issue 6)
  customFunctions: CustomFunctionsService;
  mcpServers: McpServersService;
  /** OAuth tokens stored per user for oauth2 registry servers. */
  mcpUserTokens: McpUserTokensService;
  /** Live MCP sessions and their cached tool lists. */
  mcpClients: McpClientPool;
  /** A registered server's tools, for the console. */
  mcpTools: McpToolsCatalog;
  skills: SkillsService;
  // tasks (issue 3): submission, queries, stop, approvals; the worker (also in `background`)
  tasks: TasksService;
  taskWorker: TaskWorker;
  /** Tasks and failures per day of an agent (the console's activity chart). */
  taskActivity: TaskActivityService;
  // knowledge bases (issue 7): CRUD, documents, search; the indexer (also in `background`)
  knowledge: KnowledgeService;
  knowledgeIndexer: KnowledgeIndexer;
  // xpander SDK/CLI compatibility (issue 25): the internal routes' adapters over the services above
  xpander: { agents: XpanderAgents; tasks: XpanderTasks };
  // schedules (issue 23): CRUD and the agent's own schedules; the scheduler (also in `background`)
  schedules: SchedulesService;
  scheduler: ScheduleScheduler;
  // memory (issue 26): memories of agents and users; extraction after tasks (also in `background`)
  memories: MemoryService;
  memoryExtractor: MemoryExtractor;
  // notifications (issue 21): task-end webhooks, Slack, email; the dispatcher is in `background`
  notifications: NotificationsService;
  notificationDispatcher: Startable;
  // observability (issue 28): Prometheus metrics (undefined when AGENTRY_METRICS=false), OpenTelemetry export
  // (undefined without an OTLP endpoint)
  metrics?: Observability['metrics'];
  tracing?: Observability['tracing'];
  // external agents (issue 22): discoverable agents served over A2A and as an MCP server
  a2a: LazyA2aInbound;
  mcpEndpoint: McpInboundService;
  // workflows (issue 27): definitions and versions; runs are tasks of their `orchestration` agent
  workflows: WorkflowsService;
  /** Started by the worker role. */
  background: Startable[];
  close(): Promise<void>;
}

export interface ContainerOptions {
  clock?: Clock;
  log?: Logger;
  /** Replaces the runtime's TaskRunner (tests of the queue and worker). */
  taskRunner?: TaskRunner;
}

export async function createContainer(config: Config, opts: ContainerOptions = {}): Promise<Container> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel, config.logFormat);
  // The data directory (database, master key, files) is the service user's alone: 0700, created or tightened.
  ensurePrivateDir(config.dataDir, (m) => log.warn(m));
  const db = openDatabase({ url: config.databaseUrl, sqlitePath: join(config.dataDir, 'agentry.db'), log });
  // Before migrating: data migrations may seal stored values (0012).
  const masterKey = resolveMasterKey(config.masterKey, config.dataDir);
  const secretBox = new SecretBox(masterKey);
  await migrate(db, { secretBox });
  const urls = new PublicUrls();
  urls.api = config.publicApiUrl ?? `http://localhost:${config.apiPort}`;
  urls.webhook = config.publicWebhookUrl ?? `http://localhost:${config.webhookPort}`;

  // --- organizations and authentication
  const orgsRepo = new OrgsRepository(db);
  const orgs = new OrgsService(orgsRepo, clock);
  const auth = new AuthService(orgsRepo, config.jwt);
  const apiKeys = new ApiKeysService(orgsRepo, orgs, clock);
  const { lease, ...limits } = config.rateLimits;
  const rateLimits = new RateLimits(new RateLimiter(new RateBucketsRepository(db), clock, lease, log), limits);

  const background: Startable[] = [];
  // --- observability (issue 28): before anything that reports to it
  const observability = await createObservability(config, db, clock, log);
  if (observability.tracing) background.push({ start: async () => {}, stop: () => observability.tracing!.shutdown() });
  // Every outbound call made for a user (connector invoke, MCP, knowledge-base URLs, llm_api_base) goes through this fetch:
  // the egress policy (docs/contract.md#egress), checked on the connected address of every hop.
  const egress = createEgressPolicy(config.egressAllow);
  const safeFetch = createSafeFetch(egress);

  // --- agents (issue 2)
  const agentsRepo = new AgentsRepository(db);
  // Tool-kind sections below add theirs: toolResolvers.action = ..., toolResolvers.custom_function = ...
  const toolResolvers = createToolResolverRegistry({ agents: agentsRepo });
  const agents = new AgentsService(agentsRepo, clock, urls, secretBox, toolResolvers);
  const secrets = new SecretsService(new SecretsRepository(db), secretBox, clock);

  // Tenant JSON Schemas (custom-function inputs, connector inputs, output schemas, tool arguments) are compiled and
  // run on a worker thread: a large one costs hundreds of milliseconds, which must not stall this event loop.
  const schemaChecker = new SchemaChecker();
  background.push({ start: async () => {}, stop: () => schemaChecker.close() });

  // --- connectors (issue 5)
  const connectorsRepo = new ConnectorsRepository(db);
  const documentLoader = new DocumentLoader();
  background.push({ start: async () => {}, stop: () => documentLoader.close() });
  const operationSchemas = new OperationSchemas(connectorsRepo, { nodeBudget: config.schemaNodeBudget, schemaChecker });
  const openApiFetcher = new OpenApiDocumentFetcher(safeFetch, { maxBytes: config.files.maxFileBytes, timeoutMs: 30_000 });
  const connectors = new ConnectorsService(connectorsRepo, operationSchemas, documentLoader, secretBox, clock, openApiFetcher);
  const connectorInvoker = new OperationInvoker(connectors, safeFetch, new OAuthTokenCache(clock), clock);
  toolResolvers.action = new ActionToolResolver(connectors);
  const actionTools = new ActionToolProvider({
    findConnection: (org, id) => connectors.findConnection(org, id),
    describeOperation: (org, connectorId, opId) => connectors.describeOperation(org, connectorId, opId),
    invoke: (target, payload, signal) => connectorInvoker.invoke(target, payload, signal),
  });

  // --- runtime: LLM providers, tool loop (issue 3)
  const runtime = createRuntime({
    config,
    schemaChecker,
    egressFetch: safeFetch as typeof globalThis.fetch,
    secretBox,
    clock,
    log,
    secrets: () => secrets,
    // The tasks service is built in the next section; sub-agent tools only reach it at call time.
    submitter: () => tasks,
    describeAgent: async (orgId, agentId) => {
      const a = await agents.get(orgId, agentId).catch(() => null);
      return a ? { name: a.name, description: typeof a.description === 'string' ? a.description : '' } : null;
    },
    stopTask: (orgId, taskId) => tasks.stop(orgId, taskId),
    lastEventData: (orgId, taskId, type) => tasks.lastEventData(orgId, taskId, type),
  });

  // --- notifications (issue 21): the outbox is planned by the task worker and delivered by the dispatcher
  const notificationsModule = createNotificationsModule({
    db, config, clock, log, secretBox, urls, egress, safeFetch,
    secrets: (org, name) => secrets.reveal(org, name),
    owners: () => ({ assertTask: (o, t) => tasks.assertExists(o, t), agentExists: async (o, a) => (await agents.find(o, a)) !== undefined }),
  });

  // --- tasks: queue, worker, invoke (issue 3)
  const tasksModule = createTasksModule({ db, config, clock, log, secretBox, agents, runner: observability.observe(opts.taskRunner ?? runtime.runner), notifier: notificationsModule.outbox });
  const tasks = tasksModule.tasks;
  // access (issue 24): OIDC pre-auth, checked on the agent's configuration and on every invocation
  const preAuth = new PreAuthService(config.oidcPreAuth, safeFetch, clock);
  agents.useConfigRule((cfg) => preAuth.checkConfig(cfg));
  tasks.usePreAuth(preAuth);
  background.push(tasksModule.worker);
  background.push(notificationsModule.dispatcher);
  // Closes the notification connection (PostgreSQL) after the worker stopped; every role uses it.
  background.push({ start: async () => {}, stop: () => tasksModule.signals.close() });

  // --- files and webhooks (issue 4)
  // Uploads are read in child processes (started on the first upload), never on this process's main thread.
  const { maxImagePixels, maxImageSide, maxSheetCells, ...host } = config.extraction;
  const extraction = new ExtractionPool(host, log);
  background.push({ start: async () => {}, stop: () => extraction.close() });
  const files = new FilesService(
    new FilesRepository(db),
    await createBlobStore(config.blob, config.dataDir),
    new FileSigner(masterKey),
    extraction,
    clock,
    urls,
    { ...config.files, archive: DEFAULT_ARCHIVE_LIMITS, content: { image: { maxPixels: maxImagePixels, maxSide: maxImageSide }, maxSheetCells } },
    log,
  );
  // The agents service answers the receiver's narrow WebhookAgentDirectory port (find: status, developer access).
  const webhookChannels = new WebhookChannelsService(new WebhookChannelsRepository(db), agents, urls, clock);
  const webhooks = new WebhookReceiver(webhookChannels, agents, auth, files, tasks, config.syncTimeoutMs, log, rateLimits);

  // --- tool kinds: custom functions, MCP, skills (issue 6)
  const sandbox = new SandboxPool({
    size: config.sandbox.threads,
    limits: { timeoutMs: config.sandbox.timeoutMs, memoryBytes: config.sandbox.memoryBytes },
    maxQueuePerOrg: config.sandbox.maxQueuePerOrg,
  });
  background.push({ start: async () => {}, stop: () => sandbox.close() });
  const customFunctions = new CustomFunctionsService(new CustomFunctionsRepository(db), sandbox, schemaChecker, clock);
  const mcpServersRepo = new McpServersRepository(db);
  const mcpServers = new McpServersService(mcpServersRepo, secretBox, clock);
  const mcpUserTokens = new McpUserTokensService(new McpUserTokensRepository(db), mcpServersRepo, secretBox, clock);
  const mcpClients = new McpClientPool({ fetch: safeFetch, clock });
  background.push({ start: async () => {}, stop: () => mcpClients.close() });
  const mcpTools = new McpToolsCatalog(mcpServers, mcpClients);
  const skills = new SkillsService(new SkillsRepository(db), clock);
  toolResolvers.custom_function = new CustomFunctionToolResolver(customFunctions);
  toolResolvers.mcp = new McpToolResolver(mcpServers, secretBox);
  toolResolvers.skill = new SkillToolResolver(skills);
  runtime.tools.register('action', actionTools); // connectors (issue 5): built in the connectors section
  runtime.tools.register('custom_function', new CustomFunctionToolProvider(customFunctions));
  runtime.tools.register('mcp', new McpToolProvider({ registry: mcpServers, storedTokens: mcpUserTokens, pool: mcpClients, box: secretBox }));
  runtime.tools.register('skill', new SkillToolProvider(skills));
  runtime.context.register('skills', new SkillContext(skills));

  // --- knowledge bases (issue 7)
  const kbRepo = new KnowledgeRepository(db);
  const chunkStore = new ChunkStoreRepository(db);
  const jobQueue = new JobQueueRepository(db);
  const embeddings = config.embeddings ? new OpenAiCompatibleEmbeddings(config.embeddings) : undefined;
  const documentReader = new DocumentReader(files, safeFetch, { maxBytes: config.files.maxFileBytes, fetchTimeoutMs: 60_000 });
  const knowledge = new KnowledgeService(kbRepo, chunkStore, jobQueue, files, documentReader, embeddings, clock, log);
  const jobWakeups = new JobWakeups(db, log);
  const knowledgeIndexer = new KnowledgeIndexer(
    jobQueue,
    kbRepo,
    chunkStore,
    documentReader,
    embeddings,
    clock,
    log,
    { concurrency: 2, leaseMs: config.worker.leaseMs, pollMs: 1000, retryBaseMs: 2000 },
    jobWakeups,
  );
  knowledge.onEnqueued = () => {
    knowledgeIndexer.wake();
    void jobWakeups.notify();
  };
  knowledge.agentExists = async (orgId, agentId) => (await agents.find(orgId, agentId)) !== undefined;
  // First in `background`, so it stops (handing its jobs back) before the extraction host and the database it uses close.
  background.unshift(knowledgeIndexer);
  agents.useKnowledgeBaseLookup(knowledge);
  runtime.tools.register('knowledge', new KnowledgeToolProvider(knowledge));
  runtime.context.register('knowledge', new KnowledgeContext(knowledge));

  // --- schedules (issue 23)
  const schedulesRepo = new SchedulesRepository(db);
  const scheduleAgents = {
    exists: (org: string, id: string) => agents.exists(org, id),
    developerAccess: async (org: string, id: string) => (await agents.find(org, id))?.developerAccess,
  };
  const schedules = new SchedulesService(schedulesRepo, scheduleAgents, tasks, clock);
  const scheduler = new ScheduleScheduler(schedulesRepo, new ScheduleFiring(schedulesRepo, tasks, scheduleAgents), clock, log, config.worker.schedulerPollMs);
  // First in `background`: it stops making tasks before the worker that runs them stops.
  background.unshift(scheduler);
  runtime.tools.register('schedule', new ScheduleToolProvider(schedules));
  // --- memory (issue 26): user and agent memories, session summaries, the "about the user" context
  const memory = createMemoryModule({ db, runtime, clock, log, embeddings, signals: tasksModule.signals, agents: { exists: async (org, id) => (await agents.find(org, id)) !== undefined } });
  background.push(memory.extractor);
  // --- external agents (issue 22): `a2a` and `curl` agent types run through their own runners
  registerExternalAgents(runtime, { fetch: safeFetch as typeof globalThis.fetch, secrets: (org, name) => secrets.reveal(org, name), clock, log, schemaChecker });
  const a2a = new LazyA2aInbound({ agents, tasks, urls, syncTimeoutMs: config.syncTimeoutMs, log });
  const mcpEndpoint = new McpInboundService({ agents, tasks, syncTimeoutMs: config.syncTimeoutMs, log });
  // --- workflows (issue 27): the `orchestration` agent type, the `workflow` tool kind
  const { workflows } = createWorkflowsModule({ db, clock, runtime, toolResolvers, agents, tasks, connectors, invoker: connectorInvoker, customFunctions, childMaxWaitMs: config.syncTimeoutMs });

  if (config.bootstrapApiKey) {
    const org = await orgs.ensureOrganization('default');
    await orgs.registerKey(org.id, config.bootstrapApiKey, 'bootstrap');
  }

  // --- xpander SDK/CLI compatibility (issue 25): adapters only, no behaviour of their own
  const xpander = { agents: new XpanderAgents(agents, connectors, connectorInvoker), tasks: new XpanderTasks(tasks) };

  return {
    config,
    db,
    clock,
    log,
    urls,
    secretBox,
    orgs,
    auth,
    apiKeys,
    rateLimits,
    preAuth,
    agents,
    toolResolvers,
    secrets,
    runtime,
    connectors,
    connectorInvoker,
    files,
    webhookChannels,
    webhooks,
    customFunctions,
    mcpServers,
    mcpUserTokens,
    mcpClients,
    mcpTools,
    skills,
    tasks,
    taskActivity: tasksModule.activity,
    taskWorker: tasksModule.worker,
    knowledge,
    knowledgeIndexer,
    xpander,
    schedules,
    scheduler,
    memories: memory.memories,
    memoryExtractor: memory.extractor,
    notifications: notificationsModule.service,
    notificationDispatcher: notificationsModule.dispatcher,
    metrics: observability.metrics,
    tracing: observability.tracing,
    a2a,
    mcpEndpoint,
    workflows,
    background,
    async close() {
      for (const b of background) await b.stop();
      await db.close();
    },
  };
}
