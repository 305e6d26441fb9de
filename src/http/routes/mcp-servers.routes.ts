import { abortOnClose } from './connectors.routes.js';
import type { Container } from '../../container.js';
import {
  McpServerCreateBody,
  McpServerParams,
  McpServerPatchBody,
  McpUserTokenParams,
  McpUserTokenPutBody,
  presentMcpServer,
  presentMcpUserToken,
} from '../../mcp/mcp.schemas.js';
import { pageOf, PageQuery, type Router } from '../router.js';

export function mcpServersRoutes(router: Router, c: Container): void {
  const tags = ['mcp servers'];
  const svc = c.mcpServers;

  router.route(
    { method: 'POST', url: '/v1/mcp_servers', summary: 'Register an MCP server', tags, body: McpServerCreateBody, status: 201 },
    async ({ principal, body }) => presentMcpServer(await svc.create(principal.organizationId, body)),
  );

  router.route({ method: 'GET', url: '/v1/mcp_servers', summary: 'List registered MCP servers', tags, query: PageQuery }, async ({ principal, query }) => {
    const { items, total } = await svc.list(principal.organizationId, query.page, query.per_page);
    return pageOf(items.map(presentMcpServer), total, query.page, query.per_page);
  });

  router.route(
    { method: 'GET', url: '/v1/mcp_servers/:id', summary: 'Get a registered MCP server', tags, params: McpServerParams },
    async ({ principal, params }) => presentMcpServer(await svc.get(principal.organizationId, params.id)),
  );

  router.route(
    { method: 'GET', url: '/v1/mcp_servers/:id/tools', summary: "The tools the server offers (502 when it cannot be reached, 409 for OAuth servers)", tags, params: McpServerParams },
    ({ principal, params, reply }) => c.mcpTools.list(principal.organizationId, params.id, abortOnClose(reply)),
  );

  router.route(
    { method: 'PATCH', url: '/v1/mcp_servers/:id', summary: 'Update a registered MCP server', tags, params: McpServerParams, body: McpServerPatchBody },
    async ({ principal, params, body }) => presentMcpServer(await svc.update(principal.organizationId, params.id, body)),
  );

  router.route(
    { method: 'DELETE', url: '/v1/mcp_servers/:id', summary: 'Delete a registered MCP server', tags, params: McpServerParams, status: 204 },
    async ({ principal, params, reply }) => {
      await svc.delete(principal.organizationId, params.id);
      return reply.code(204).send();
    },
  );

  // OAuth tokens stored per user for an oauth2 server: used by runs of that user's tasks when the invocation's
  // user_tokens has none for the server (docs/decisions.md#mcp-tokens-stored-per-user). Tokens are write-only.
  const tokens = c.mcpUserTokens;
  router.route(
    {
      method: 'PUT',
      url: '/v1/mcp_servers/:id/user_tokens/:user_id',
      summary: "Store a user's OAuth access token for an oauth2 MCP server (201 created, 200 replaced)",
      tags,
      params: McpUserTokenParams,
      body: McpUserTokenPutBody,
    },
    async ({ principal, params, body, reply }) => {
      const { token, created } = await tokens.put(principal.organizationId, params.id, params.user_id, body.access_token, body.expires_in);
      reply.code(created ? 201 : 200);
      return presentMcpUserToken(token);
    },
  );

  router.route(
    { method: 'GET', url: '/v1/mcp_servers/:id/user_tokens', summary: "List the users with a stored token (never the tokens)", tags, params: McpServerParams, query: PageQuery },
    async ({ principal, params, query }) => {
      const { items, total } = await tokens.list(principal.organizationId, params.id, query.page, query.per_page);
      return pageOf(items.map(presentMcpUserToken), total, query.page, query.per_page);
    },
  );

  router.route(
    { method: 'DELETE', url: '/v1/mcp_servers/:id/user_tokens/:user_id', summary: "Delete a user's stored token", tags, params: McpUserTokenParams, status: 204 },
    async ({ principal, params, reply }) => {
      await tokens.delete(principal.organizationId, params.id, params.user_id);
      return reply.code(204).send();
    },
  );
}
