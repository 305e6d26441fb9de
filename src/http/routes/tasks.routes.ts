import type { Container } from '../../container.js';
import { AgentIdParams, AgentTaskListQuery, TaskIdParams, TaskListQuery } from '../../tasks/tasks.schemas.js';
import type { TaskFilter } from '../../tasks/tasks.repository.js';
import { z } from 'zod';
import { pageOf, qs, type Router } from '../router.js';

const ActivityQuery = z.object({ days: qs.int(1, 90, 14).describe('Days to count, ending today (UTC); 1 to 90, default 14.') });
import { lastEventId, sendEventStream, wantsEventStream } from './task-stream.js';

/** Tasks: list, read, stop, delete, thread, execution trace (JSON or SSE), supervised approvals. */
export function tasksRoutes(router: Router, c: Container): void {
  const tags = ['tasks'];

  router.route({ method: 'GET', url: '/v1/tasks', summary: 'List tasks', tags, query: TaskListQuery }, async ({ principal, query }) => {
    const { items, total } = await c.tasks.queries.list(principal.organizationId, filterOf(query), query.page, query.per_page, principal);
    return pageOf(items, total, query.page, query.per_page);
  });

  router.route(
    { method: 'GET', url: '/v1/agents/:agent_id/tasks', summary: "List an agent's tasks", tags, params: AgentIdParams, query: AgentTaskListQuery },
    async ({ principal, params, query }) => {
      const { items, total } = await c.tasks.queries.listForAgent(principal.organizationId, params.agent_id, filterOf(query), query.page, query.per_page, principal);
      return pageOf(items, total, query.page, query.per_page);
    },
  );

  router.route(
    { method: 'GET', url: '/v1/agents/:agent_id/tasks/activity', summary: "An agent's tasks and failures per UTC day (the console's chart)", tags, params: AgentIdParams, query: ActivityQuery },
    ({ principal, params, query }) => c.taskActivity.perDay(principal.organizationId, params.agent_id, query.days, principal),
  );

  router.route({ method: 'GET', url: '/v1/tasks/:task_id', summary: 'Get a task', tags, params: TaskIdParams }, ({ principal, params }) =>
    c.tasks.queries.get(principal.organizationId, params.task_id, principal),
  );

  router.route({ method: 'DELETE', url: '/v1/tasks/:task_id', summary: 'Delete a task (stopping it first)', tags, params: TaskIdParams }, async ({ principal, params }) => {
    await c.tasks.control.delete(principal.organizationId, params.task_id, principal);
    return { id: params.task_id, deleted: true };
  });

  router.route({ method: 'POST', url: '/v1/tasks/:task_id/stop', summary: 'Stop a task (idempotent)', tags, params: TaskIdParams }, ({ principal, params }) =>
    c.tasks.control.stop(principal.organizationId, params.task_id, principal),
  );

  router.route({ method: 'GET', url: '/v1/tasks/:task_id/thread', summary: "A task's conversation thread", tags, params: TaskIdParams }, ({ principal, params }) =>
    c.tasks.queries.thread(principal.organizationId, params.task_id, principal),
  );

  router.route(
    { method: 'GET', url: '/v1/tasks/:task_id/events', summary: 'Execution trace: JSON, or SSE (replay, then live) with Accept: text/event-stream', tags, params: TaskIdParams },
    async ({ principal, params, request, reply }) => {
      if (!wantsEventStream(request)) return c.tasks.queries.events(principal.organizationId, params.task_id, principal);
      await c.tasks.queries.assertExists(principal.organizationId, params.task_id, principal);
      return sendEventStream(request, reply, (signal) => c.tasks.queries.follow(principal.organizationId, params.task_id, lastEventId(request), signal));
    },
  );

  router.route({ method: 'POST', url: '/v1/tasks/:task_id/approve', summary: 'Approve the paused tool call of a supervised task', tags, params: TaskIdParams }, ({ principal, params }) =>
    c.tasks.control.approve(principal.organizationId, params.task_id, principal),
  );

  router.route({ method: 'POST', url: '/v1/tasks/:task_id/reject', summary: 'Reject the paused tool call of a supervised task', tags, params: TaskIdParams }, ({ principal, params }) =>
    c.tasks.control.reject(principal.organizationId, params.task_id, principal),
  );
}

function filterOf(q: { agent_id?: string; status?: TaskFilter['status']; user_id?: string; source?: string; from_date?: number; to_date?: number; q?: string }): TaskFilter {
  return { agentId: q.agent_id, status: q.status, userId: q.user_id, source: q.source, fromMs: q.from_date, toMs: q.to_date, text: q.q };
}
