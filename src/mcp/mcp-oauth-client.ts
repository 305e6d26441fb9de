import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { mcpAuthSdk } from './mcp-sdk.js';
import type { Clock } from '../lib/clock.js';
import type { FetchLike } from './mcp-client-pool.js';
import type { McpTransport } from './mcp.types.js';
import type { ObtainedTokens } from './mcp-user-tokens.service.js';
import { boundedResponse } from '../net/bounded-response.js';
import { MAX_MCP_MESSAGE_BYTES } from './mcp-client-pool.js';

/**
 * The OAuth client side of the MCP authorization spec, on the SDK's functions (client/auth.js), every request through
 * the egress-checked fetch given to it:
 * - discovery: the server's 401 `WWW-Authenticate` (`resource_metadata`, `scope`), RFC 9728 protected resource
 *   metadata (the header's URL, else `/.well-known/oauth-protected-resource`), then RFC 8414 / OIDC metadata of its
 *   first authorization server (the SDK falls back to the server's origin when there is no resource metadata);
 * - the authorization link (PKCE S256, `resource`), the code exchange and the refresh, with client_secret_basic or
 *   client_secret_post as the metadata allows when there is a client secret, as a public client otherwise.
 */

export interface McpOAuthDiscovery {
  authorizationServerUrl: string;
  metadata?: AuthorizationServerMetadata;
  /** RFC 8707 resource indicator: the resource metadata's `resource`, else the server URL. */
  resource: string;
  /** Scopes the server asks for: the 401's `scope`, else the resource metadata's `scopes_supported`. */
  scopes: string[];
}

export interface McpOAuthClientCredentials {
  clientId: string;
  clientSecret: string | null;
}

/** Discovery answers are kept this long per server URL (each run without a token would otherwise repeat 3-4 requests). */
const DISCOVERY_TTL_MS = 5 * 60_000;

/** Every request of the flow gives up after this: a silent authorization server must not hold a run's tool building. */
const REQUEST_TIMEOUT_MS = 15_000;

export class McpOAuthClient {
  private readonly discovered = new Map<string, { at: number; d: McpOAuthDiscovery }>();
  private readonly fetch: FetchLike;

  constructor(
    egressFetch: FetchLike,
    private readonly clock: Clock,
  ) {
    // The SDK reads discovery, registration and token answers whole: bounded like every MCP answer.
    this.fetch = (input, init) => egressFetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then((res) => boundedResponse(res, MAX_MCP_MESSAGE_BYTES));
  }

  async discover(server: { url: string; transport: McpTransport }): Promise<McpOAuthDiscovery> {
    const now = this.clock.now();
    const hit = this.discovered.get(server.url);
    if (hit && now - hit.at < DISCOVERY_TTL_MS) return hit.d;
    const { discoverOAuthServerInfo, checkResourceAllowed } = await mcpAuthSdk();
    const challenge = await this.challenge(server);
    const info = await discoverOAuthServerInfo(server.url, { resourceMetadataUrl: challenge.resourceMetadataUrl, fetchFn: this.fetch });
    const resource = info.resourceMetadata?.resource ?? server.url;
    // Metadata naming another resource would have the user authorize a token for something else.
    if (!checkResourceAllowed({ requestedResource: server.url, configuredResource: resource })) {
      throw new Error(`the protected resource metadata names the resource ${resource}, which does not cover ${server.url}`);
    }
    const d: McpOAuthDiscovery = {
      authorizationServerUrl: info.authorizationServerUrl,
      metadata: info.authorizationServerMetadata,
      resource,
      scopes: splitScopes(challenge.scope ?? info.resourceMetadata?.scopes_supported?.join(' ')),
    };
    this.discovered.set(server.url, { at: now, d });
    return d;
  }

  /** The link the user opens; `state` is set by the caller once the verifier is known (see withState). */
  async start(d: McpOAuthDiscovery, clientId: string, redirectUri: string, scope: string): Promise<{ url: URL; codeVerifier: string }> {
    const { startAuthorization } = await mcpAuthSdk();
    const { authorizationUrl, codeVerifier } = await startAuthorization(d.authorizationServerUrl, {
      metadata: d.metadata,
      clientInformation: { client_id: clientId },
      redirectUrl: redirectUri,
      scope: scope || undefined,
      resource: d.resource,
    });
    return { url: authorizationUrl, codeVerifier };
  }

  async exchange(d: McpOAuthDiscovery, c: McpOAuthClientCredentials, code: string, codeVerifier: string, redirectUri: string): Promise<ObtainedTokens> {
    const { exchangeAuthorization } = await mcpAuthSdk();
    const tokens = await exchangeAuthorization(d.authorizationServerUrl, {
      metadata: d.metadata,
      clientInformation: client(c),
      authorizationCode: code,
      codeVerifier,
      redirectUri,
      resource: d.resource,
      fetchFn: this.fetch,
    });
    return obtained(tokens);
  }

  async refresh(d: McpOAuthDiscovery, c: McpOAuthClientCredentials, refreshToken: string): Promise<ObtainedTokens> {
    const { refreshAuthorization } = await mcpAuthSdk();
    const tokens = await refreshAuthorization(d.authorizationServerUrl, {
      metadata: d.metadata,
      clientInformation: client(c),
      refreshToken,
      resource: d.resource,
      fetchFn: this.fetch,
    });
    return obtained(tokens);
  }

  /**
   * An unauthenticated first request, as an MCP client makes it: a server that wants OAuth answers 401 and may name
   * its resource metadata and the scope it needs. Anything else (no 401, unreachable) leaves the well-known paths.
   */
  private async challenge(server: { url: string; transport: McpTransport }): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
    const { LATEST_PROTOCOL_VERSION, extractWWWAuthenticateParams } = await mcpAuthSdk();
    const init: RequestInit =
      server.transport === 'sse'
        ? { method: 'GET', headers: { accept: 'text/event-stream' } }
        : {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 0,
              method: 'initialize',
              params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'agentry', version: '1.0.0' } },
            }),
          };
    const res = await this.fetch(server.url, init);
    await res.body?.cancel().catch(() => {});
    if (res.status !== 401) return {};
    const p = extractWWWAuthenticateParams(res);
    return { resourceMetadataUrl: p.resourceMetadataUrl, scope: p.scope };
  }
}

export function splitScopes(s: string | undefined): string[] {
  return (s ?? '').split(/\s+/).filter(Boolean);
}

function client(c: McpOAuthClientCredentials) {
  return c.clientSecret ? { client_id: c.clientId, client_secret: c.clientSecret } : { client_id: c.clientId };
}

function obtained(t: OAuthTokens): ObtainedTokens {
  return {
    accessToken: t.access_token,
    ...(t.refresh_token ? { refreshToken: t.refresh_token } : {}),
    ...(typeof t.expires_in === 'number' ? { expiresIn: t.expires_in } : {}),
  };
}
