import type { Container } from '../../container.js';
import { AppError } from '../../errors.js';
import { AgentIdParams, CreateExecutionBody, HistoryQuery, OrgTaskParams, ReportTaskBody, TaskIdParams, UpdateExecutionBody, UserIdParams } from '../../xpander/xpander.schemas.js';
import type { Router } from '../router.js';
import { lastEventId, sendEventStream, wantsEventStream } from './task-stream.js';
import { agentVersion } from './xpander-agents.routes.js';

/** xpander's agent-execution routes (its SDK's Tasks and Task), over the task engine's parts (XpanderTasks); docs/xpander-sdk.md. */
export function xpanderTasksRoutes(router: Router, c: Container): void {
  const x = c.xpander.tasks;
  const tags = ['xpander'];

  router.route(
    { method: 'GET', url: '/agent-execution/executions/history/:agent_id', summary: "An agent's tasks, newest first (xpander SDK)", tags, params: AgentIdParams, query: HistoryQuery, auth: true },
    ({ principal, params, query }) => x.historyOfAgent(principal.organizationId, params.agent_id, query),
  );
  router.route(
    { method: 'GET', url: '/agent-execution/executions/history/user/:user_id', summary: "A user's tasks, newest first (xpander SDK)", tags, params: UserIdParams, query: HistoryQuery, auth: true },
    ({ principal, params, query }) => x.historyOfUser(principal, params.user_id, query),
  );
  router.route(
    { method: 'POST', url: '/agent-execution/:agent_id', summary: 'Create a task (asynchronous invocation; x-agent-version honoured) (xpander SDK)', tags, params: AgentIdParams, body: CreateExecutionBody, auth: true },
    ({ principal, params, body, request }) => x.create(principal.organizationId, params.agent_id, agentVersion(request), body),
  );
  router.route(
    { method: 'POST', url: '/agent-execution/:agent_id/report_task', summary: 'Record a task the SDK ran itself, finished, with its result, tokens and duration (xpander SDK)', tags, params: AgentIdParams, body: ReportTaskBody, auth: true },
    ({ principal, params, body }) => x.report(principal.organizationId, params.agent_id, body),
  );
  router.route({ method: 'GET', url: '/agent-execution/:task_id/status', summary: 'A task (xpander SDK)', tags, params: TaskIdParams, auth: true }, ({ principal, params }) =>
    x.get(principal.organizationId, params.task_id),
  );
  router.route({ method: 'DELETE', url: '/agent-execution/:task_id', summary: 'Stop a task (xpander SDK)', tags, params: TaskIdParams, auth: true }, ({ principal, params }) =>
    x.stop(principal.organizationId, params.task_id),
  );
  router.route(
    { method: 'PATCH', url: '/agent-execution/:task_id/update', summary: 'Save a task: only stopping it changes anything; other changes answer 409 (xpander SDK)', tags, params: TaskIdParams, body: UpdateExecutionBody, auth: true },
    ({ principal, params, body }) => x.update(principal.organizationId, params.task_id, body),
  );
  // The SDK's Task.aevents(): {base}/{organization_id}/agent-execution/{task_id}/events, Server-Sent Events.
  router.route(
    { method: 'GET', url: '/:organization_id/agent-execution/:task_id/events', summary: "A task's events as the SDK's TaskUpdateEvent: SSE (replay, then live) with Accept: text/event-stream, else a JSON array", tags, params: OrgTaskParams, auth: true },
    async ({ principal, params, request, reply }) => {
      if (params.organization_id !== principal.organizationId) throw AppError.notFound('Task');
      // httpx-sse (the SDK's client) asks for text/event-stream; without it the trace so far is a JSON array, as on /v1.
      if (!wantsEventStream(request)) return x.events(principal.organizationId, params.task_id);
      await c.tasks.queries.assertExists(principal.organizationId, params.task_id);
      return sendEventStream(request, reply, (signal) => x.follow(principal.organizationId, params.task_id, lastEventId(request), signal));
    },
  );
}
