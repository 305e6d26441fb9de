import type { Container } from '../../container.js';
import { AgentScheduleListQuery, AgentScheduleParams, ScheduleCreateBody, ScheduleListQuery, SchedulePatchBody } from '../../schedules/schedules.schemas.js';
import { AgentIdParams, AgentTaskListQuery } from '../../tasks/tasks.schemas.js';
import { pageOf, PageQuery, type Router } from '../router.js';

/** Schedules of an agent (docs/schedules.md), and every schedule of the organization. */
export function schedulesRoutes(router: Router, c: Container): void {
  const tags = ['schedules'];
  const svc = c.schedules;
  const base = '/v1/agents/:agent_id/schedules';
  const one = `${base}/:schedule_id`;

  router.route({ method: 'GET', url: '/v1/schedules', summary: "The organization's schedules", tags, query: ScheduleListQuery }, async ({ principal, query }) => {
    const { items, total } = await svc.list(principal.organizationId, { agentId: query.agent_id, createdBy: query.created_by }, query.page, query.per_page);
    return pageOf(items, total, query.page, query.per_page);
  });

  router.route({ method: 'GET', url: base, summary: "An agent's schedules", tags, params: AgentIdParams, query: AgentScheduleListQuery }, async ({ principal, params, query }) => {
    const { items, total } = await svc.listForAgent(principal.organizationId, params.agent_id, { createdBy: query.created_by }, query.page, query.per_page);
    return pageOf(items, total, query.page, query.per_page);
  });

  router.route(
    { method: 'POST', url: base, summary: 'Schedule an agent (cron, interval or one-off)', tags, params: AgentIdParams, body: ScheduleCreateBody, status: 201 },
    ({ principal, params, body }) => svc.create(principal.organizationId, params.agent_id, body),
  );

  router.route({ method: 'GET', url: one, summary: 'Get a schedule', tags, params: AgentScheduleParams }, ({ principal, params }) =>
    svc.get(principal.organizationId, params.agent_id, params.schedule_id),
  );

  router.route({ method: 'PATCH', url: one, summary: 'Change a schedule', tags, params: AgentScheduleParams, body: SchedulePatchBody }, ({ principal, params, body }) =>
    svc.update(principal.organizationId, params.agent_id, params.schedule_id, body),
  );

  router.route({ method: 'DELETE', url: one, summary: 'Delete a schedule', tags, params: AgentScheduleParams, status: 204 }, async ({ principal, params, reply }) => {
    await svc.delete(principal.organizationId, params.agent_id, params.schedule_id);
    return reply.code(204).send();
  });

  router.route({ method: 'POST', url: `${one}/pause`, summary: 'Pause a schedule', tags, params: AgentScheduleParams }, ({ principal, params }) =>
    svc.pause(principal.organizationId, params.agent_id, params.schedule_id),
  );

  router.route({ method: 'POST', url: `${one}/resume`, summary: 'Resume a schedule (from now: a paused period is not caught up)', tags, params: AgentScheduleParams }, ({ principal, params }) =>
    svc.resume(principal.organizationId, params.agent_id, params.schedule_id),
  );

  router.route(
    { method: 'GET', url: `${one}/tasks`, summary: 'Tasks the schedule started', tags, params: AgentScheduleParams, query: AgentTaskListQuery },
    async ({ principal, params, query }) => {
      const filter = { status: query.status, userId: query.user_id, source: query.source, fromMs: query.from_date, toMs: query.to_date, text: query.q };
      const { items, total } = await svc.tasksOf(principal.organizationId, params.agent_id, params.schedule_id, filter, query.page, query.per_page);
      return pageOf(items, total, query.page, query.per_page);
    },
  );

  router.route(
    { method: 'GET', url: `${one}/occurrences`, summary: 'Occurrences that came due: the task each made, or why none', tags, params: AgentScheduleParams, query: PageQuery },
    async ({ principal, params, query }) => {
      const { items, total } = await svc.occurrences(principal.organizationId, params.agent_id, params.schedule_id, query.page, query.per_page);
      return pageOf(items, total, query.page, query.per_page);
    },
  );
}
