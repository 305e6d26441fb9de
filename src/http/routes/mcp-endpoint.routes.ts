import { callDepthOf } from '../../tasks/call-depth.js';
import { userTokenOf } from '../../auth/pre-auth-token.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.js';
import type { Router } from '../router.js';

/** Headers of the MCP streamable-HTTP transport passed on to it (nothing else of the request reaches the SDK). */
const MCP_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/**
 * The organization's discoverable agents as an MCP server over streamable HTTP (docs/external-agents.md), at /v1/mcp.
 * Authenticated like every /v1 route. Stateless: GET (a server-sent stream) and DELETE (end a session) answer 405.
 */
export function mcpEndpointRoutes(router: Router, c: Container): void {
  for (const method of ['POST', 'GET', 'DELETE'] as const) {
    router.route({ method, url: '/v1/mcp', summary: 'MCP server (streamable HTTP): one tool per discoverable agent', tags: ['mcp'] }, async ({ principal, request, reply }) => {
      const userToken = userTokenOf(request.headers, request.headers['x-api-key'] !== undefined);
      const res = await c.mcpEndpoint.handle(principal, toWebRequest(request), request.body, { userToken, callDepth: callDepthOf(request.headers) });
      return send(reply, res);
    });
  }
}

function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const h of MCP_HEADERS) {
    const v = request.headers[h];
    if (typeof v === 'string') headers.set(h, v);
  }
  const body = request.method === 'POST' && request.body !== undefined ? JSON.stringify(request.body) : undefined;
  return new Request(`http://agentry.local${request.url}`, { method: request.method, headers, body });
}

/**
 * The transport's answer as is, except that an HTTP error also carries `detail` (the contract's error shape) beside
 * its JSON-RPC error, which MCP clients read.
 */
async function send(reply: FastifyReply, res: Response): Promise<unknown> {
  reply.code(res.status);
  res.headers.forEach((v, k) => {
    if (k !== 'content-length' && k !== 'transfer-encoding') reply.header(k, v);
  });
  const text = await res.text();
  if (res.status < 400) return reply.send(text);
  let parsed: Record<string, any> | undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const detail = typeof parsed?.error?.message === 'string' ? parsed.error.message : text || `HTTP ${res.status}`;
  reply.header('content-type', 'application/json');
  return reply.send(JSON.stringify({ detail, ...(parsed && typeof parsed === 'object' ? parsed : {}) }));
}
