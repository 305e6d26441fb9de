import { z } from 'zod';
import type { Container } from '../../container.js';
import { TaskIdParams } from '../../tasks/tasks.schemas.js';
import type { Router } from '../router.js';

const AgentParams = z.strictObject({ agent_id: z.string().min(1).max(128) });
const DeliveryParams = TaskIdParams.extend({ delivery_id: z.string().min(1).max(128) });

/** Task-end notifications (docs/notifications.md): a task's deliveries, re-sending one, the agent's signing secret. */
export function notificationsRoutes(router: Router, c: Container): void {
  const tags = ['notifications'];
  router.route(
    { method: 'GET', url: '/v1/tasks/:task_id/notifications', summary: "A task's notification deliveries and every attempt", tags, params: TaskIdParams },
    ({ principal, params }) => c.notifications.list(principal.organizationId, params.task_id),
  );
  router.route(
    {
      method: 'POST',
      url: '/v1/tasks/:task_id/notifications/:delivery_id/resend',
      summary: 'Send a delivered or given-up notification again (same id and payload)',
      tags,
      params: DeliveryParams,
    },
    ({ principal, params }) => c.notifications.resend(principal.organizationId, params.task_id, params.delivery_id),
  );
  router.route(
    { method: 'GET', url: '/v1/agents/:agent_id/notifications/signing-secret', summary: "Whether the agent's webhook signing secret exists (never its value)", tags, params: AgentParams },
    ({ principal, params }) => c.notifications.signingSecret(principal.organizationId, params.agent_id),
  );
  router.route(
    {
      method: 'POST',
      url: '/v1/agents/:agent_id/notifications/signing-secret',
      summary: "Create or replace the agent's webhook signing secret; the answer is the only place it is shown",
      tags,
      params: AgentParams,
    },
    ({ principal, params }) => c.notifications.rotateSigningSecret(principal.organizationId, params.agent_id),
  );
}
