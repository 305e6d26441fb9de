import { z } from 'zod';
import type { Container } from '../../container.js';
import { MCP_OAUTH_CALLBACK_PATH, type McpOAuthOutcome } from '../../mcp/mcp-oauth.service.js';
import type { Router } from '../router.js';

const CallbackQuery = z.object({
  state: z.string().max(8192).optional().describe('The state of the authorization link, sealed by this service (organization, server, user, PKCE verifier, expiry).'),
  code: z.string().max(8192).optional().describe('The authorization code the authorization server sent back.'),
  error: z.string().max(512).optional().describe('The OAuth error the authorization server sent back instead of a code.'),
  error_description: z.string().max(2048).optional().describe("Text of the authorization server's error."),
});

/**
 * The OAuth redirect_uri of MCP servers' interactive authorization (docs/decisions.md#mcp-servers-interactive-oauth).
 * The user's browser calls it, so it takes no API key: the sealed `state` names the organization, server and user.
 * 200 when the token was stored, 400 with the reason otherwise: a small page for a browser (Accept: text/html),
 * the API's JSON shape (`{detail}` on errors) for anything else.
 */
export function mcpOAuthRoutes(router: Router, c: Container): void {
  router.route(
    { method: 'GET', url: MCP_OAUTH_CALLBACK_PATH, summary: 'OAuth redirect of MCP server authorization (called by the browser; the state is the authority)', tags: ['mcp servers'], auth: false, query: CallbackQuery },
    async ({ query, request, reply }) => {
      const outcome = await c.mcpOAuth.complete(query);
      reply.code(outcome.ok ? 200 : 400).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      if (!/\btext\/html\b/.test(request.headers.accept ?? '')) {
        return outcome.ok ? { status: 'authorized', mcp_server: outcome.server, user_id: outcome.userId, agent_only: outcome.agentOnly } : { detail: `Nothing was stored: ${outcome.reason}` };
      }
      return reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").send(page(outcome));
    },
  );
}

function page(o: McpOAuthOutcome): string {
  const [title, text] = o.ok
    ? ['Authorization complete', `MCP server '${o.server}' is now authorized for user '${o.userId}'${o.agentOnly ? ' (for the agent that asked only)' : ''}. You can close this page and ask the agent again.`]
    : ['Authorization failed', `Nothing was stored: ${o.reason}.`];
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body style="font-family:sans-serif;max-width:40em;margin:3em auto"><h1>${esc(title)}</h1><p>${esc(text)}</p></body></html>`;
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}
