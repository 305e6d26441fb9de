import type { Config } from './config.js';
import type { Clock } from './lib/clock.js';
import type { Logger } from './lib/logger.js';
import { createPlatform, type Platform } from './platform.module.js';
import { closeOnStop, type Startable } from './lib/lifecycle.js';
import { createAccessModule, type AccessModule } from './auth/access.module.js';
import { isAppError } from './errors.js';
import { createAgentsModule, type AgentsModule } from './agents/agents.module.js';
import { SecretsRepository } from './secrets/secrets.repository.js';
import { SecretsService } from './secrets/secrets.service.js';
import { createRuntime, type Runtime } from './runtime/runtime.js';
import type { TaskRunner } from './runtime/task-runner.js';
import { createConnectorsModule } from './connectors/connectors.module.js';
import type { ConnectorsService } from './connectors/connectors.service.js';
import type { OperationInvoker } from './connectors/invoke/operation-invoker.js';
import { createTasksModule, type TaskParts } from './tasks/tasks.module.js';
import type { TaskActivityService } from './tasks/task-activity.service.js';
import type { TaskWorker } from './tasks/task.worker.js';
import type { TaskRetention } from './tasks/task-retention.js';
import { createFilesModule } from './files/files.module.js';
import type { FilesService } from './files/files.service.js';
import type { FileSweep } from './files/file-sweep.js';
import { createWebhooksModule, type WebhooksModule } from './webhooks/webhooks.module.js';
import { createCustomFunctionsModule } from './custom-functions/custom-functions.module.js';
import type { CustomFunctionsService } from './custom-functions/custom-functions.service.js';
import { createMcpModule, type McpModule } from './mcp/mcp.module.js';
import { createSkillsModule } from './skills/skills.module.js';
import type { SkillsService } from './skills/skills.service.js';
import { createKnowledgeModule } from './knowledge/knowledge.module.js';
import type { KnowledgeIndexer } from './knowledge/knowledge.indexer.js';
import type { KnowledgeService } from './knowledge/knowledge.service.js';
import { XpanderAgents } from './xpander/xpander-agents.js';
import { XpanderTasks } from './xpander/xpander-tasks.js';
import { createSchedulesModule } from './schedules/schedules.module.js';
import type { SchedulesService } from './schedules/schedules.service.js';
import type { ScheduleScheduler } from './schedules/schedule.scheduler.js';
import type { MemoryExtractor } from './memory/memory-extractor.js';
import { createMemoryModule } from './memory/memory.module.js';
import type { MemoryService } from './memory/memory.service.js';
import { createNotificationsModule } from './notifications/notifications.module.js';
import type { NotificationsService } from './notifications/notifications.service.js';
import { createObservability, type Observability } from './observability/observability.js';
import { createExternalAgentsModule, type ExternalAgentsModule } from './external-agents/external-agents.module.js';
import { createWorkflowsModule } from './workflows/workflows.module.js';
import type { WorkflowsService } from './workflows/workflows.service.js';
import { outputSchemaCheck } from './lib/schema-checker.js';

export type { Startable } from './lib/lifecycle.js';

/**
 * The composition root: each domain's module (`src/<domain>/<domain>.module.ts`) builds its services; this file calls
 * the modules in dependency order and assembles what they return. A new domain adds a module, one call below and its
 * fields to this interface.
 */
export interface Container extends Platform, AccessModule, AgentsModule, WebhooksModule, Omit<McpModule, 'sessions'>, ExternalAgentsModule {
  secrets: SecretsService;
  // connectors (issue 5): imported OpenAPI documents, connections, operation schemas; invoking operations
  connectors: ConnectorsService;
  connectorInvoker: OperationInvoker;
  // runtime (issue 3): the TaskRunner, the run-time tool registry, context contributors, LLM resolution
  runtime: Runtime;
  files: FilesService;
  customFunctions: CustomFunctionsService;
  skills: SkillsService;
  // tasks (issue 3): `tasks.submissions` (invoke, webhooks, sub-agents, schedules), `tasks.queries` (reads, traces,
  // visibility), `tasks.control` (stop, delete, approvals); the worker (also in `background`)
  tasks: TaskParts;
  taskWorker: TaskWorker;
  /** Deletes finished tasks past AGENTRY_TASK_RETENTION_DAYS (also in `background`). */
  taskRetention: TaskRetention;
  /** Retries failed blob deletions and deletes orphan uploads (also in `background`). */
  fileSweep: FileSweep;
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
  const platform = await createPlatform(config, opts);
  const { db, clock, log, urls, secretBox, safeFetch, schemaChecker } = platform;
  // An output_schema the run could not enforce is refused where it is written (agents, invocations, schedules).
  const checkOutputSchema = outputSchemaCheck(schemaChecker);
  // Observability (issue 28) before anything that reports to it.
  const observability = await createObservability(config, db, clock, log);
  // What every module may take from the platform (a module's deps type picks what it uses).
  const base = platform;

  // Each domain's module builds its services and registers its variants (tool kinds, agent types, context
  // contributors) with the registries given to it. The order is the order of dependencies; where two domains need
  // each other, one reaches the other at call time through a closure (named below), never by a setter.
  const access = createAccessModule(base);
  const { agents, toolResolvers } = createAgentsModule({
    ...base,
    configRules: [(cfg) => access.preAuth.checkConfig(cfg)],
    // Knowledge bases are built after agents (they check agent ids): reached at call time.
    knowledgeBases: { exists: (org, id) => kb.knowledge.exists(org, id), missingDocuments: (org, id, docs) => kb.knowledge.missingDocuments(org, id, docs) },
    checkOutputSchema,
    // Secrets are built just below: reached at call time.
    secretExists: (org, name) => secrets.get(org, name).then(() => true, (e: unknown) => (isAppError(e) && e.code === 'not_found' ? false : Promise.reject(e))),
  });
  const secrets = new SecretsService(new SecretsRepository(db), secretBox, clock);
  const runtime = createRuntime({
    config,
    schemaChecker,
    egressFetch: safeFetch as typeof globalThis.fetch,
    secretBox,
    clock,
    log,
    secrets: () => secrets,
    // The tasks domain is built below; sub-agent tools only reach it at call time.
    submitter: () => tasks.submissions,
    describeAgent: async (orgId, agentId) => {
      const a = await agents.get(orgId, agentId).catch(() => null);
      return a ? { name: a.name, description: typeof a.description === 'string' ? a.description : '' } : null;
    },
    stopTask: (orgId, taskId) => tasks.control.stop(orgId, taskId),
    lastEventData: (orgId, taskId, type) => tasks.queries.lastEventData(orgId, taskId, type),
  });
  const connectors = createConnectorsModule({ ...base, toolResolvers, runtime });
  const agentExists = async (org: string, id: string) => (await agents.find(org, id)) !== undefined;
  // The outbox is planned by the task worker and delivered by the dispatcher.
  const notifications = createNotificationsModule({
    ...base,
    secrets: (org, name) => secrets.reveal(org, name),
    owners: () => ({ assertTask: (o, t) => tasks.queries.assertExists(o, t), agentExists }),
  });
  const metrics = observability.metrics;
  const files = await createFilesModule({
    ...base,
    // The task inbox is built below; the file sweep reaches it at call time.
    settleTasks: () => tasksModule.inbox.settle(),
    onBlobDeletesFailed: metrics ? (n) => metrics.fileBlobDeletesFailed(n) : undefined,
    onOrphans: metrics ? (n) => metrics.filesOrphaned(n) : undefined,
  });
  const tasksModule = createTasksModule({
    ...base,
    agents,
    runner: observability.observe(opts.taskRunner ?? runtime.runner),
    notifier: notifications.outbox,
    preAuth: access.preAuth,
    checkOutputSchema,
    onTasksExpired: metrics ? (n) => metrics.tasksExpired(n) : undefined,
    onRunTimedOut: metrics ? () => metrics.runTimedOut() : undefined,
    onDuplicateEvent: metrics ? () => metrics.duplicateEvent() : undefined,
    // A deleted task's uploads leave the blob store once its delete has committed.
    removeBlobs: (released) => files.disposal.removeBlobs(released),
    // Read at run time: the memory module (below) registers the summaries' store on the runtime's hooks.
    summaryCoverage: async (org, taskId) => (await runtime.hooks.summaries?.get(org, taskId))?.coveredRun,
  });
  const tasks = tasksModule.tasks;
  metrics?.observeWorker(tasksModule.worker);
  const webhooks = createWebhooksModule({ ...base, agents, auth: access.auth, files: files.files, tasks, rateLimits: access.rateLimits, syncTimeoutMs: config.syncTimeoutMs });
  const tools = { ...base, toolResolvers, runtime };
  const customFunctions = createCustomFunctionsModule(tools);
  const mcp = createMcpModule(tools);
  const { skills } = createSkillsModule(tools);
  // A deleted document's file leaves the blob store once its delete has committed, as a task's uploads do.
  const kb = createKnowledgeModule({ ...base, files: files.files, removeBlobs: (released) => files.disposal.removeBlobs(released), agentExists, runtime });
  const schedules = createSchedulesModule({ ...base, agents, tasks, runtime, pollMs: config.worker.schedulerPollMs, checkOutputSchema });
  const memory = createMemoryModule({ ...base, runtime, embeddings: kb.embeddings, signals: tasksModule.signals, agents: { exists: agentExists } });
  const external = createExternalAgentsModule({
    runtime,
    runners: { fetch: safeFetch as typeof globalThis.fetch, secrets: (org, name) => secrets.reveal(org, name), clock, log, schemaChecker },
    agents,
    tasks,
    urls,
    syncTimeoutMs: config.syncTimeoutMs,
  });
  const { workflows } = createWorkflowsModule({
    ...base,
    runtime,
    toolResolvers,
    agents,
    tasks,
    connectors: connectors.connectors,
    invoker: connectors.invoker,
    customFunctions: customFunctions.customFunctions,
    childMaxWaitMs: config.syncTimeoutMs,
  });

  if (config.bootstrapApiKey) {
    const org = await access.orgs.ensureOrganization('default');
    await access.orgs.registerKey(org.id, config.bootstrapApiKey, 'bootstrap');
  }

  // Started by the worker role in this order, stopped in this order by close() and the server:
  const background: Startable[] = [
    // the scheduler first: it stops making tasks before the worker that runs them stops;
    schedules.scheduler,
    // the retention sweep (idle unless AGENTRY_TASK_RETENTION_DAYS) and the file sweep: each ends after its batch in flight;
    tasksModule.retention,
    files.sweep,
    // the indexer next: it hands its jobs back before the extraction host and the database it uses close;
    kb.indexer,
    ...(observability.tracing ? [closeOnStop(() => observability.tracing!.shutdown())] : []),
    closeOnStop(() => schemaChecker.close()),
    closeOnStop(() => runtime.guardrails.close()),
    connectors.loader,
    tasksModule.worker,
    notifications.dispatcher,
    // the notification connection (PostgreSQL) after the worker stopped; every role uses it.
    closeOnStop(() => tasksModule.signals.close()),
    files.extraction,
    customFunctions.sandbox,
    mcp.sessions,
    memory.extractor,
  ];

  return {
    ...(platform satisfies Platform),
    ...access,
    agents,
    toolResolvers,
    secrets,
    runtime,
    connectors: connectors.connectors,
    connectorInvoker: connectors.invoker,
    files: files.files,
    ...webhooks,
    customFunctions: customFunctions.customFunctions,
    mcpServers: mcp.mcpServers,
    mcpUserTokens: mcp.mcpUserTokens,
    mcpOAuth: mcp.mcpOAuth,
    mcpClients: mcp.mcpClients,
    mcpTools: mcp.mcpTools,
    skills,
    tasks,
    taskActivity: tasksModule.activity,
    taskWorker: tasksModule.worker,
    taskRetention: tasksModule.retention,
    fileSweep: files.sweep,
    knowledge: kb.knowledge,
    knowledgeIndexer: kb.indexer,
    // xpander SDK/CLI compatibility (issue 25): adapters only, no behaviour of their own
    xpander: { agents: new XpanderAgents(agents, connectors.connectors, connectors.invoker), tasks: new XpanderTasks(tasks) },
    schedules: schedules.schedules,
    scheduler: schedules.scheduler,
    memories: memory.memories,
    memoryExtractor: memory.extractor,
    notifications: notifications.service,
    notificationDispatcher: notifications.dispatcher,
    metrics: observability.metrics,
    tracing: observability.tracing,
    ...external,
    workflows,
    background,
    async close() {
      for (const b of background) await b.stop();
      await db.close();
    },
  };
}
