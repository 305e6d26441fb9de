import { z } from 'zod';
import type { Container } from '../../container.js';
import { AppError } from '../../errors.js';
import { AgentIdParams, TaskIdParams } from '../../xpander/xpander.schemas.js';
import type { Router } from '../router.js';

/**
 * Internal routes of xpander's SDK and CLI that Agentry knows but does not serve (docs/xpander-sdk.md lists why).
 * Each checks what it names (another organization's agent or task answers 404, as everywhere) and then answers
 * 501 with the reason, never a pretended success. Two have a real answer: the HITL decisions and the (empty)
 * organization-wide default LLM headers.
 */
const tags = ['xpander'];
const AgentTaskParams = AgentIdParams.extend({ task_id: z.string().min(1) });
const AgentUserParams = AgentIdParams.extend({ user_id: z.string().min(1) });
const OrgAgentParams = AgentIdParams.extend({ organization_id: z.string().min(1) });
const AnyBody = z.unknown().optional();

const refuse = (what: string, instead: string) => new AppError('not_implemented', `${what} is not supported by Agentry; ${instead}`);

const AGENT_ROUTES: [method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, what: string, instead: string][] = [
  ['PATCH', '/agents/:agent_id/sync_local_tools', 'Syncing local tools into the graph', 'local tools run in the SDK and need no registration'],
  ['GET', '/agents/:agent_id/db', 'A per-agent session database', 'give the framework your own storage'],
  ['GET', '/agents/:agent_id/llm_preflight', 'LLM preflight', 'invoke the agent to check its model'],
  ['POST', '/agents-metrics/:agent_id/execution', 'Execution metrics reports', 'read token counts on the task (GET /v1/tasks/{id})'],
  ['POST', '/agent-containers/:agent_id/deploy', 'Container deployment', 'run your container yourself and call the API'],
  ['POST', '/agent-containers/:agent_id/start', 'Container deployment', 'run your container yourself and call the API'],
  ['DELETE', '/agent-containers/:agent_id/stop', 'Container deployment', 'run your container yourself and call the API'],
  ['GET', '/agent-containers/:agent_id/generate_upload_link', 'Container image upload', 'run your container yourself and call the API'],
];

export function xpanderUnsupportedRoutes(router: Router, c: Container): void {
  const agentExists = async (org: string, id: string) => {
    if (!(await c.agents.exists(org, id))) throw AppError.notFound('Agent');
  };

  for (const [method, url, what, instead] of AGENT_ROUTES) {
    router.route({ method, url, summary: `Not supported (501): ${what}`, tags, status: 501, params: AgentIdParams, body: method === 'GET' ? undefined : AnyBody, auth: true }, async ({ principal, params }) => {
      await agentExists(principal.organizationId, params.agent_id);
      throw refuse(what, instead);
    });
  }

  router.route({ method: 'POST', url: '/agent-execution/:task_id/events/push', summary: 'Not supported (501): pushing events from a client', tags, status: 501, params: TaskIdParams, body: AnyBody, auth: true }, async ({ principal, params }) => {
    await c.tasks.queries.assertExists(principal.organizationId, params.task_id);
    throw refuse('Pushing task events from a client', "the trace holds the events of Agentry's own runs");
  });

  router.route({ method: 'GET', url: '/activity/:agent_id/:task_id', summary: 'Not supported (501): the activity log', tags, status: 501, params: AgentTaskParams, auth: true }, async ({ principal, params }) => {
    const task = await c.tasks.queries.get(principal.organizationId, params.task_id);
    if (task.agent_id !== params.agent_id) throw AppError.notFound('Task');
    throw refuse("xpander's activity log", 'read GET /v1/tasks/{id}/thread and /v1/tasks/{id}/events');
  });

  router.route({ method: 'POST', url: '/mcp_auth/:agent_id/:user_id/get_token', summary: 'Not supported (501): MCP OAuth token broker', tags, status: 501, params: AgentUserParams, body: AnyBody, auth: true }, async ({ principal, params }) => {
    await agentExists(principal.organizationId, params.agent_id);
    throw refuse('The MCP OAuth token broker', 'store a user token with PUT /v1/mcp_servers/{id}/user_tokens/{user_id} or pass user_tokens on the task');
  });

  // The CLI's graph editing under /{organization_id}/agents/{agent_id}/...
  for (const [method, suffix] of [['POST', 'tools'], ['POST', 'graph/nodes'], ['POST', 'graph/edges'], ['GET', 'graph'], ['POST', 'sync']] as const) {
    router.route(
      { method, url: `/:organization_id/agents/:agent_id/${suffix}`, summary: 'Not supported (501): graph editing', tags, status: 501, params: OrgAgentParams, body: method === 'GET' ? undefined : AnyBody, auth: true },
      async ({ principal, params }) => {
        if (params.organization_id !== principal.organizationId) throw AppError.notFound('Agent');
        await agentExists(principal.organizationId, params.agent_id);
        throw refuse('Editing the graph directly', 'attach tools with POST /v1/agents/{id}/tools (the graph follows)');
      },
    );
  }

  // Declared in the SDK: mapped onto the supervised-approval decisions.
  router.route({ method: 'POST', url: '/hitl/:task_id/approve', summary: "Approve a paused supervised task's tool call (xpander SDK)", tags, params: TaskIdParams, body: AnyBody, auth: true }, ({ principal, params }) =>
    c.tasks.control.approve(principal.organizationId, params.task_id),
  );
  router.route({ method: 'POST', url: '/hitl/:task_id/reject', summary: "Reject a paused supervised task's tool call (xpander SDK)", tags, params: TaskIdParams, body: AnyBody, auth: true }, ({ principal, params }) =>
    c.tasks.control.reject(principal.organizationId, params.task_id),
  );

  // Agentry has no organization-wide default LLM headers (an agent's own llm_extra_headers apply): none to give.
  router.route({ method: 'GET', url: '/metadata/default_llm_extra_headers', summary: 'Organization default LLM headers: none (xpander SDK)', tags, auth: true }, () => ({}));
}
