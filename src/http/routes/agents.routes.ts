import { z } from 'zod';
import type { Container } from '../../container.js';
import {
  AgentIdParams,
  AgentSummaryView,
  AgentToolParams,
  AgentVersionParams,
  AgentView,
  CreateAgentBody,
  PatchAgentBody,
  ToolEntry,
} from '../../agents/agent.schemas.js';
import { PageQuery, qs, type Router } from '../router.js';

const tags = ['agents'];
const DeployQuery = (def: boolean) => z.object({ deploy: qs.bool().default(def) });
const paged = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), total: z.number(), page: z.number(), per_page: z.number(), total_pages: z.number() });

export function agentsRoutes(router: Router, c: Container): void {
  const agents = c.agents;

  router.route({ method: 'POST', url: '/v1/agents', summary: 'Create an agent', tags, body: CreateAgentBody, status: 201, response: AgentView }, ({ principal, body }) =>
    agents.create(principal, body),
  );
  router.route({ method: 'GET', url: '/v1/agents', summary: 'List agents (minimal)', tags, query: PageQuery, response: paged(AgentSummaryView) }, ({ principal, query }) =>
    agents.list(principal, query.page, query.per_page),
  );
  router.route({ method: 'GET', url: '/v1/agents/full', summary: 'List agents (full configuration)', tags, query: PageQuery, response: paged(AgentView) }, ({ principal, query }) =>
    agents.listFull(principal, query.page, query.per_page),
  );
  router.route({ method: 'GET', url: '/v1/agents/:agent_id', summary: 'Get an agent (the draft when one is pending)', tags, params: AgentIdParams, response: AgentView }, ({ principal, params }) =>
    agents.get(principal.organizationId, params.agent_id, principal),
  );
  router.route(
    { method: 'PATCH', url: '/v1/agents/:agent_id', summary: 'Update an agent (staged as a draft unless deploy=true or staging is off)', tags, params: AgentIdParams, query: DeployQuery(false), body: PatchAgentBody, response: AgentView },
    ({ principal, params, query, body }) => agents.update(principal, params.agent_id, body, { deploy: query.deploy }),
  );
  router.route({ method: 'PUT', url: '/v1/agents/:agent_id', summary: 'Deploy an agent: publish the draft as version + 1', tags, params: AgentIdParams, response: AgentView }, ({ principal, params }) =>
    agents.deploy(principal.organizationId, params.agent_id, principal),
  );
  router.route({ method: 'DELETE', url: '/v1/agents/:agent_id', summary: 'Delete an agent (its tasks stay readable)', tags, params: AgentIdParams, status: 202 }, ({ principal, params }) =>
    agents.delete(principal.organizationId, params.agent_id, principal),
  );
  router.route({ method: 'GET', url: '/v1/agents/:agent_id/versions', summary: 'Published versions, newest first', tags, params: AgentIdParams, query: PageQuery }, ({ principal, params, query }) =>
    agents.listVersions(principal.organizationId, params.agent_id, query.page, query.per_page, principal),
  );
  router.route({ method: 'GET', url: '/v1/agents/:agent_id/versions/:version', summary: 'One published version', tags, params: AgentVersionParams, response: AgentView }, ({ principal, params }) =>
    agents.getVersion(principal.organizationId, params.agent_id, params.version, principal),
  );
  router.route({ method: 'GET', url: '/v1/agents/:agent_id/tools', summary: "The agent's tools, attached_tools and graph", tags, params: AgentIdParams }, ({ principal, params }) =>
    agents.getTools(principal.organizationId, params.agent_id, principal),
  );
  router.route(
    { method: 'POST', url: '/v1/agents/:agent_id/tools', summary: 'Attach one tool entry', tags, params: AgentIdParams, query: DeployQuery(true), body: ToolEntry, status: 201 },
    ({ principal, params, query, body }) => agents.attachTool(principal.organizationId, params.agent_id, body, { deploy: query.deploy }, principal),
  );
  router.route(
    { method: 'DELETE', url: '/v1/agents/:agent_id/tools/:tool_id', summary: 'Detach a tool', tags, params: AgentToolParams, query: DeployQuery(true) },
    ({ principal, params, query }) => agents.detachTool(principal.organizationId, params.agent_id, params.tool_id, { deploy: query.deploy }, principal),
  );
}
