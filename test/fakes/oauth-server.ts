import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OAuth 2.1 authorization server on 127.0.0.1 for tests: RFC 8414 metadata, an authorization endpoint
 * that approves at once (302 to the redirect_uri with a code, as a user who consents), and a token endpoint that
 * checks what a real one checks: the client's authentication (per the advertised method), the code (single use,
 * bound to client, redirect_uri and resource) and the PKCE verifier against the S256 challenge. Refresh tokens work
 * until revoked.
 */

export interface FakeOAuthOptions {
  clientId: string;
  /** null: a public client (no authentication at the token endpoint). */
  clientSecret: string | null;
  /** Advertised and required: client_secret_basic, client_secret_post or none. */
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** Lifetime of access tokens, seconds. */
  expiresIn?: number;
}

export interface AuthorizeRequest {
  params: Record<string, string>;
  code: string;
}

export interface TokenRequest {
  grant_type: string;
  params: Record<string, string>;
  authorization?: string;
  ok: boolean;
  /** Why it was refused. */
  error?: string;
}

export interface FakeOAuthServer {
  base: string;
  authorizations: AuthorizeRequest[];
  tokenRequests: TokenRequest[];
  /** Access tokens issued and not revoked. */
  validAccessTokens: Set<string>;
  /** Makes every refresh token issued so far unusable. */
  revokeRefreshTokens(): void;
  /** Every metadata request, by path. */
  metadataRequests: string[];
  close(): Promise<void>;
}

const rand = (prefix: string) => `${prefix}-${randomBytes(9).toString('base64url')}`;

export async function startFakeOAuthServer(opts: FakeOAuthOptions): Promise<FakeOAuthServer> {
  const codes = new Map<string, { params: Record<string, string>; used: boolean }>();
  const refreshTokens = new Set<string>();
  const state: Omit<FakeOAuthServer, 'base' | 'close' | 'revokeRefreshTokens'> = { authorizations: [], tokenRequests: [], validAccessTokens: new Set(), metadataRequests: [] };
  let base = '';

  const issue = () => {
    const access = rand('access');
    const refresh = rand('refresh');
    state.validAccessTokens.add(access);
    refreshTokens.add(refresh);
    return { access_token: access, token_type: 'Bearer', expires_in: opts.expiresIn ?? 3600, refresh_token: refresh };
  };

  const clientAuthError = (req: IncomingMessage, p: Record<string, string>): string | undefined => {
    const basic = req.headers.authorization?.startsWith('Basic ') ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString('utf8') : undefined;
    if (opts.authMethod === 'client_secret_basic') {
      if (basic !== `${encodeURIComponent(opts.clientId)}:${encodeURIComponent(opts.clientSecret ?? '')}` && basic !== `${opts.clientId}:${opts.clientSecret}`) return 'basic auth missing or wrong';
      if (p.client_secret) return 'client_secret in the body with basic auth';
      return undefined;
    }
    if (opts.authMethod === 'client_secret_post') {
      if (basic) return 'basic auth not advertised';
      if (p.client_id !== opts.clientId || p.client_secret !== opts.clientSecret) return 'client_id/client_secret in the body missing or wrong';
      return undefined;
    }
    if (basic || p.client_secret) return 'a public client sent a secret';
    return p.client_id === opts.clientId ? undefined : 'client_id missing or wrong';
  };

  const http: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'GET' && url.pathname.startsWith('/.well-known/')) {
      state.metadataRequests.push(url.pathname);
      if (url.pathname !== '/.well-known/oauth-authorization-server') return json(404, { error: 'not_found' });
      return json(200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: [opts.authMethod],
      });
    }
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const params = Object.fromEntries(url.searchParams);
      if (params.client_id !== opts.clientId || params.response_type !== 'code' || params.code_challenge_method !== 'S256' || !params.code_challenge) {
        return json(400, { error: 'invalid_request' });
      }
      const code = rand('code');
      codes.set(code, { params, used: false });
      state.authorizations.push({ params, code });
      const back = new URL(params.redirect_uri!);
      back.searchParams.set('code', code);
      if (params.state) back.searchParams.set('state', params.state);
      return void res.writeHead(302, { location: back.href }).end();
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const p = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const record = (ok: boolean, error?: string) => state.tokenRequests.push({ grant_type: p.grant_type ?? '', params: p, authorization: req.headers.authorization, ok, error });
      const authError = clientAuthError(req, p);
      if (authError) {
        record(false, authError);
        return json(401, { error: 'invalid_client', error_description: authError });
      }
      if (p.grant_type === 'authorization_code') {
        const grant = codes.get(p.code ?? '');
        let error: string | undefined;
        if (!grant || grant.used) error = 'unknown or used code';
        else if (grant.params.redirect_uri !== p.redirect_uri) error = 'redirect_uri differs';
        else if (grant.params.resource !== p.resource) error = 'resource differs';
        else if (createHash('sha256').update(p.code_verifier ?? '').digest('base64url') !== grant.params.code_challenge) error = 'PKCE verifier does not match';
        if (grant) grant.used = true;
        record(!error, error);
        return error ? json(400, { error: 'invalid_grant', error_description: error }) : json(200, issue());
      }
      if (p.grant_type === 'refresh_token') {
        const ok = refreshTokens.delete(p.refresh_token ?? '');
        record(ok, ok ? undefined : 'unknown refresh token');
        return ok ? json(200, issue()) : json(400, { error: 'invalid_grant', error_description: 'refresh token revoked' });
      }
      record(false, 'grant type');
      return json(400, { error: 'unsupported_grant_type' });
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    base,
    ...state,
    revokeRefreshTokens: () => refreshTokens.clear(),
    async close() {
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
