import type { Container } from '../../container.js';
import { McpServerCreateBody, McpServerParams, McpServerPatchBody, presentMcpServer } from '../../mcp/mcp.schemas.js';
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
}
