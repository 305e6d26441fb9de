import type { AgentsService } from '../agents/agents.service.js';
import { CreateAgentBody, type CreateAgentInput } from '../agents/agent.schemas.js';
import type { ToolResolverRegistry } from '../agents/tool-resolvers/index.js';
import { WorkflowToolResolver } from '../agents/tool-resolvers/workflow.resolver.js';
import type { ConnectorsService } from '../connectors/connectors.service.js';
import type { OperationInvoker } from '../connectors/invoke/operation-invoker.js';
import type { InvokePayload } from '../connectors/invoke/request-builder.js';
import type { CustomFunctionsService } from '../custom-functions/custom-functions.service.js';
import type { Db } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import type { Runtime } from '../runtime/runtime.js';
import { AgentToolProvider } from '../runtime/tools/agent.tools.js';
import { WorkflowToolProvider } from '../runtime/tools/workflow.tools.js';
import type { TaskParts } from '../tasks/tasks.module.js';
import type { StepPorts } from './workflow-steps.js';
import { WorkflowRunner, type WorkflowNode } from './workflow.runner.js';
import { WorkflowsRepository } from './workflows.repository.js';
import { WorkflowsService, type OrchestrationTarget, type WorkflowPorts } from './workflows.service.js';

/**
 * The workflows domain's section of the container: the service, the `orchestration` agent-type runner, the
 * `workflow` tool kind (create-time resolver and run-time provider). Built after tasks, connectors and custom
 * functions, whose services the steps use.
 */
export function createWorkflowsModule(d: {
  db: Db;
  clock: Clock;
  schemaChecker: SchemaChecker;
  runtime: Runtime;
  toolResolvers: ToolResolverRegistry;
  agents: AgentsService;
  /** Agent steps submit child tasks (and stop them); the engine reads its own task's trace. */
  tasks: TaskParts;
  connectors: ConnectorsService;
  invoker: OperationInvoker;
  customFunctions: CustomFunctionsService;
  /** The longest an agent step (or a workflow tool call) waits for its child task. */
  childMaxWaitMs: number;
}): { workflows: WorkflowsService } {
  const nodes = (w: OrchestrationTarget): WorkflowNode[] => [{ type: 'workflow', workflow_id: w.workflowId, version: w.version }];
  const ports: WorkflowPorts = {
    agentVisible: (viewer, id) => d.agents.visibleTo(viewer, id),
    findConnection: (org, id) => d.connectors.findConnection(org, id),
    findOperation: (org, connectorId, ref) => d.connectors.findOperation(org, connectorId, ref),
    functionExists: async (org, id) => (await d.customFunctions.findMany(org, [id])).length > 0,
    orchestration: {
      async create(principal, w) {
        // The create schema refuses type 'orchestration' from callers; this is the one place that makes one.
        const input = CreateAgentBody.parse({ name: w.name, description: w.description, access_scope: 'organizational', should_stage_before_publish: false, output_format: 'text' });
        // The schema's type excludes it (callers cannot set it), hence the cast.
        const orchestration = { ...input, type: 'orchestration', orchestration_nodes: nodes(w) } as unknown as CreateAgentInput;
        return (await d.agents.create(principal, orchestration)).id;
      },
      async pin(principal, agentId, w) {
        const agent = await d.agents.get(principal.organizationId, agentId).catch(() => undefined);
        // Re-typed or deleted by someone: the workflow gets a new agent instead.
        if (!agent || agent.type !== 'orchestration') return false;
        await d.agents.update(principal, agentId, { orchestration_nodes: nodes(w) }, { deploy: true, fromWorkflows: true });
        return true;
      },
      async delete(org, agentId) {
        await d.agents.delete(org, agentId).catch((e: unknown) => {
          if (!(e instanceof AppError && e.code === 'not_found')) throw e;
        });
      },
    },
  };
  const workflows = new WorkflowsService(new WorkflowsRepository(d.db), ports, d.clock);
  const children = new AgentToolProvider({ submitter: () => d.tasks.submissions, stopTask: (org, id) => d.tasks.control.stop(org, id), maxWaitMs: d.childMaxWaitMs });
  const stepPorts: StepPorts = {
    delegate: (agentId, args, ctx) => children.delegate(agentId, args, ctx),
    async invokeOperation(org, connectionId, operationId, payload, signal) {
      const conn = await d.connectors.findConnection(org, connectionId);
      if (!conn) throw new Error(`connection '${connectionId}' no longer exists`);
      const r = await d.invoker.invoke({ organizationId: org, connectorId: conn.connectorId, connectionId, operationId }, payload as InvokePayload, signal);
      return { status_code: r.status_code, result: r.result };
    },
    callFunction: (org, id, args, signal) => d.customFunctions.call(org, id, args, signal),
  };
  d.runtime.agentTypes.register('orchestration', new WorkflowRunner({ workflows, trace: (org, taskId) => d.tasks.queries.events(org, taskId), ports: stepPorts, clock: d.clock, schemaChecker: d.schemaChecker }));
  d.toolResolvers.workflow = new WorkflowToolResolver(workflows);
  d.runtime.tools.register('workflow', new WorkflowToolProvider({ describe: (org, id) => workflows.describe(org, id), delegate: (agentId, args, ctx) => children.delegate(agentId, args, ctx) }));
  return { workflows };
}
