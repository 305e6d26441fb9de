import { REDACTED } from '../../lib/secret-box.js';
import type { SafeFetch } from '../../net/index.js';
import type { SecurityConfig, SecurityKind } from '../connectors.schemas.js';
import type { OAuthTokenCache } from './oauth-token-cache.js';
import { CONNECTION_LOC, setHeader, type OutgoingRequest } from './request-builder.js';

/** How each security kind (docs/contract.md#connections) is applied to a request, and shown (masked) in responses. */

export interface SecurityContext {
  connectionId: string;
  fetch: SafeFetch;
  tokens: OAuthTokenCache;
  signal?: AbortSignal;
}

interface SecurityAdapter<C extends SecurityConfig> {
  apply(req: OutgoingRequest, cfg: C, ctx: SecurityContext): Promise<void>;
  /** The configuration as responses show it: secrets replaced by "********". */
  mask(cfg: C): Record<string, unknown>;
}

type Registry = { [K in SecurityKind]: SecurityAdapter<Extract<SecurityConfig, { type: K }>> };

export const SECURITY_KINDS: Registry = {
  api_key: {
    async apply(req, cfg) {
      if (cfg.in === 'query') req.url.searchParams.set(cfg.name, cfg.value);
      else setHeader(req.headers, cfg.name, cfg.value, CONNECTION_LOC);
    },
    mask: (cfg) => ({ type: cfg.type, in: cfg.in, name: cfg.name, value: REDACTED }),
  },
  bearer: {
    async apply(req, cfg) {
      setHeader(req.headers, 'authorization', `Bearer ${cfg.token}`, CONNECTION_LOC);
    },
    mask: (cfg) => ({ type: cfg.type, token: REDACTED }),
  },
  basic: {
    async apply(req, cfg) {
      setHeader(req.headers, 'authorization', `Basic ${Buffer.from(`${cfg.username}:${cfg.password}`).toString('base64')}`, CONNECTION_LOC);
    },
    mask: (cfg) => ({ type: cfg.type, username: cfg.username, password: REDACTED }),
  },
  oauth2_client_credentials: {
    async apply(req, cfg, ctx) {
      const token = await ctx.tokens.token(ctx.connectionId, cfg, ctx.fetch, ctx.signal);
      req.headers.set('authorization', `Bearer ${token}`);
    },
    mask: (cfg) => ({ type: cfg.type, token_url: cfg.token_url, client_id: cfg.client_id, client_secret: REDACTED, scopes: cfg.scopes }),
  },
};

export function applySecurity(req: OutgoingRequest, cfg: SecurityConfig, ctx: SecurityContext): Promise<void> {
  return (SECURITY_KINDS[cfg.type] as SecurityAdapter<SecurityConfig>).apply(req, cfg, ctx);
}

export function maskSecurity(cfg: SecurityConfig): Record<string, unknown> {
  return (SECURITY_KINDS[cfg.type] as SecurityAdapter<SecurityConfig>).mask(cfg);
}
