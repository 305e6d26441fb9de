import { z } from 'zod';
import type { Container } from '../../container.js';
import type { Router } from '../router.js';

const AgentParams = z.object({ agent_id: z.string() });
const Settings = z.object({ enabled: z.boolean(), url: z.string().nullable(), key_url: z.string() });

/** The agent's webhook channel settings (docs/contract.md#webhook-channel). */
export function webhookChannelRoutes(router: Router, c: Container): void {
  const tags = ['webhooks'];
  router.route(
    { method: 'GET', url: '/v1/agents/:agent_id/webhook', summary: 'Webhook channel settings', tags, params: AgentParams, response: Settings },
    ({ principal, params }) => c.webhookChannels.get(principal.organizationId, params.agent_id, principal),
  );
  router.route(
    {
      method: 'POST',
      url: '/v1/agents/:agent_id/webhook',
      summary: 'Enable the public webhook URL (idempotent; the full URL is shown only when it is created)',
      tags,
      params: AgentParams,
      response: Settings,
    },
    ({ principal, params }) => c.webhookChannels.enable(principal.organizationId, params.agent_id, principal),
  );
  router.route(
    {
      method: 'POST',
      url: '/v1/agents/:agent_id/webhook/regenerate',
      summary: 'Replace the public webhook URL; the old one stops working at once',
      tags,
      params: AgentParams,
      response: Settings,
    },
    ({ principal, params }) => c.webhookChannels.regenerate(principal.organizationId, params.agent_id, principal),
  );
  router.route(
    { method: 'DELETE', url: '/v1/agents/:agent_id/webhook', summary: 'Disable the public webhook URL', tags, params: AgentParams, response: Settings },
    ({ principal, params }) => c.webhookChannels.disable(principal.organizationId, params.agent_id, principal),
  );
}
