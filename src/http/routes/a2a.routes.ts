import { callDepthOf } from '../../tasks/call-depth.js';
import { userTokenOf } from '../../auth/pre-auth-token.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.js';
import type { RpcOutcome } from '../../external-agents/inbound/a2a-inbound.service.js';
import { AgentIdParams } from '../../agents/agent.schemas.js';
import type { Router } from '../router.js';

/**
 * Discoverable agents over A2A (docs/external-agents.md): the agent card, and the JSON-RPC endpoint (message/send,
 * message/stream, tasks/get, tasks/cancel; v1.0 method names too). Authenticated like every /v1 route.
 */
export function a2aRoutes(router: Router, c: Container): void {
  router.route(
    { method: 'GET', url: '/v1/a2a/agents/:agent_id/.well-known/agent-card.json', summary: 'The A2A agent card of a discoverable agent', params: AgentIdParams, tags: ['a2a'] },
    ({ principal, params, request }) => c.a2a.card(principal, params.agent_id, a2aVersion(request)),
  );
  router.route(
    { method: 'POST', url: '/v1/a2a/agents/:agent_id', summary: 'A2A JSON-RPC endpoint of a discoverable agent', params: AgentIdParams, tags: ['a2a'] },
    async ({ principal, params, request, reply }) => {
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      // The end user's token of a use_oidc_pre_auth agent (docs/access.md): x-user-token, or Authorization when the key is in x-api-key.
      const userToken = userTokenOf(request.headers, request.headers['x-api-key'] !== undefined);
      const out = await c.a2a.rpc(principal, params.agent_id, request.body, a2aVersion(request), gone.signal, { userToken, callDepth: callDepthOf(request.headers) });
      return out.kind === 'json' ? out.body : sendRpcStream(request, reply, out);
    },
  );
}

const KEEPALIVE_MS = 15_000;

function a2aVersion(request: FastifyRequest): string | undefined {
  const v = request.headers['a2a-version'];
  return Array.isArray(v) ? v[0] : v;
}

/** JSON-RPC answers of a streaming method as Server-Sent Events; an error before the first event is a plain JSON-RPC error. */
async function sendRpcStream(request: FastifyRequest, reply: FastifyReply, out: Extract<RpcOutcome, { kind: 'stream' }>): Promise<unknown> {
  let first: IteratorResult<Record<string, unknown>, void>;
  try {
    first = await out.events.next();
  } catch (e) {
    return out.mapError(e);
  }
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no', 'x-request-id': String(request.id) });
  raw.on('close', () => void out.events.return(undefined));
  // A quiet run (a long model call) must not look like a dead connection to proxies.
  const keepalive = setInterval(() => raw.write(': keep-alive\n\n'), KEEPALIVE_MS);
  try {
    for (let r = first; !r.done && !raw.destroyed; r = await out.events.next()) raw.write(`data: ${JSON.stringify(r.value)}\n\n`);
  } catch (e) {
    request.log.warn({ err: e }, 'A2A stream failed');
    if (!raw.destroyed) raw.write(`event: error\ndata: ${JSON.stringify(out.mapError(e))}\n\n`);
  } finally {
    clearInterval(keepalive);
    raw.end();
  }
  return reply;
}
