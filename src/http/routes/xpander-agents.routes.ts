import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Container } from '../../container.js';
import { InvokeBody } from '../../connectors/connectors.schemas.js';
import { AppError } from '../../errors.js';
import {
  AgentIdParams,
  CrudAgentRef,
  CrudCreateBody,
  CrudUpdateBody,
  SearchInterfacesBody,
  SearchOperationsBody,
} from '../../xpander/xpander.schemas.js';
import type { Principal } from '../../auth/principal.js';
import type { Router } from '../router.js';
import { abortOnClose } from './connectors.routes.js';

/**
 * xpander's internal agent and tool routes (docs/contract.md#internal-api), as its Python SDK and TypeScript CLI call
 * them. Adapters over the agents and connectors services; docs/xpander-sdk.md is the reference.
 */
const tags = ['xpander'];
const ToolParams = AgentIdParams.extend({ tool_id: z.string().min(1) });
const ToolRefParams = z.object({ tool_ref: z.string().min(1) });
const ConnectionQuery = z.object({ connection_id: z.string().min(1).optional() });
/** The SDK sends a tool's payload as is; a missing body is an empty payload. */
const ToolPayload = InvokeBody.optional();

export function xpanderAgentsRoutes(router: Router, c: Container): void {
  const x = c.xpander.agents;

  // The CLI's first call; the SDK's Agents.list calls /agents/list. Bare arrays, not pages.
  router.route({ method: 'GET', url: '/v1/agents/list', summary: 'All agents (xpander CLI)', tags }, ({ principal }) => x.list(principal));
  router.route({ method: 'GET', url: '/agents/list', summary: 'All agents (xpander SDK)', tags, auth: true }, ({ principal }) => x.list(principal));

  router.route(
    { method: 'GET', url: '/agents/:agent_id', summary: 'The published agent (or the x-agent-version one) with its tool definitions (xpander SDK)', tags, params: AgentIdParams, auth: true },
    ({ principal, params, request }) => x.get(principal.organizationId, params.agent_id, agentVersion(request)),
  );

  router.route(
    { method: 'POST', url: '/agents/:agent_id/operations/:tool_id', summary: "Invoke one of the agent's tools; x-preflight-check: true only checks (xpander SDK)", tags, params: ToolParams, body: ToolPayload, auth: true },
    ({ principal, params, body, request, reply }) =>
      x.invokeTool(principal.organizationId, params.agent_id, params.tool_id, agentVersion(request), body ?? {}, /^true$/i.test(String(request.headers['x-preflight-check'] ?? '')), abortOnClose(reply)),
  );

  router.route(
    { method: 'GET', url: '/tools/:tool_ref', summary: 'A connector operation as a standalone tool: {connector_id}_{operation_id} (xpander SDK)', tags, params: ToolRefParams, auth: true },
    ({ principal, params }) => x.standaloneTool(principal.organizationId, params.tool_ref),
  );
  router.route(
    { method: 'POST', url: '/tools/:tool_ref', summary: 'Invoke a standalone tool through ?connection_id= or the connector\'s only connection (xpander SDK)', tags, params: ToolRefParams, query: ConnectionQuery, body: ToolPayload, auth: true },
    ({ principal, params, query, body, reply }) => x.invokeStandalone(principal.organizationId, params.tool_ref, query.connection_id, body ?? {}, abortOnClose(reply)),
  );

  // The CLI's agent CRUD: the organization and agent come in the body.
  router.route({ method: 'POST', url: '/agents-crud/tools/crud/create', summary: 'Create an agent (xpander CLI)', tags, body: CrudCreateBody, status: 201, auth: true }, async ({ principal, body }) => {
    const { organization_id, ...input } = body;
    ownOrganization(principal, organization_id, 'Organization');
    return x.create(principal, input);
  });
  router.route({ method: 'PATCH', url: '/agents-crud/tools/crud/update', summary: 'Update an agent; staged unless staging is off (xpander CLI)', tags, body: CrudUpdateBody, auth: true }, async ({ principal, body }) => {
    const { organization_id, agent_id, ...patch } = body;
    ownOrganization(principal, organization_id, 'Agent');
    return x.update(principal, agent_id, patch);
  });
  router.route({ method: 'PUT', url: '/agents-crud/tools/crud/deploy', summary: 'Deploy an agent (xpander CLI)', tags, body: CrudAgentRef, auth: true }, async ({ principal, body }) => {
    ownOrganization(principal, body.organization_id, 'Agent');
    return x.deploy(principal.organizationId, body.agent_id);
  });
  router.route({ method: 'DELETE', url: '/agents-crud/tools/crud/delete', summary: 'Delete an agent (xpander CLI; JSON body)', tags, body: CrudAgentRef, auth: true }, ({ principal, body }) => {
    ownOrganization(principal, body.organization_id, 'Agent');
    return c.agents.delete(principal.organizationId, body.agent_id);
  });

  router.route(
    { method: 'POST', url: '/agents-crud/tools/agent_tools/search-interfaces', summary: 'Connectors as xpander interfaces (xpander CLI)', tags, body: SearchInterfacesBody, auth: true },
    ({ principal, body }) => x.searchInterfaces(principal.organizationId, body.search_phrase ?? ''),
  );
  router.route(
    { method: 'POST', url: '/agents-crud/tools/agent_tools/search-operations', summary: "Connectors' operations (xpander CLI)", tags, body: SearchOperationsBody, auth: true },
    ({ principal, body }) => x.searchOperations(principal.organizationId, body.interfaces.map((i) => i.asset_id), (body.search_phrases ?? []).join(' ').trim()),
  );
}

/** `x-agent-version` as the SDK sends it (`str(version)`): a published version number. */
export function agentVersion(request: FastifyRequest): number | undefined {
  const raw = request.headers['x-agent-version'];
  if (raw === undefined) return undefined;
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (!/^[1-9]\d{0,8}$/.test(v.trim())) throw AppError.validation([{ loc: ['header', 'x-agent-version'], msg: 'Input should be a valid integer, at least 1', type: 'int_parsing' }]);
  return Number(v);
}

/** A body's organization_id must be the caller's: another organization's agent answers like a missing one. */
function ownOrganization(principal: Principal, organizationId: string | null | undefined, kind: string): void {
  if (organizationId && organizationId !== principal.organizationId) throw AppError.notFound(kind);
}
