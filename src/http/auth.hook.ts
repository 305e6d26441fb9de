import type { FastifyInstance } from 'fastify';
import type { AuthService } from '../auth/auth.service.js';
import type { RateLimits } from '../auth/rate-limiter.js';
import { roleAllows, roleRefusal, type KeyRole } from '../auth/roles.js';
import { AppError } from '../errors.js';

/**
 * Authenticates every route registered with `config.auth`; the principal rides on the request. Then, before any
 * handler: the caller's rate limit (429 with Retry-After) and the route's least role (403), in that order, so a
 * caller over its limit is refused the same way whatever it asks for.
 */
export function installAuthHook(app: FastifyInstance, auth: AuthService, limits?: RateLimits): void {
  app.addHook('onRequest', async (request) => {
    const cfg = request.routeOptions.config as { auth?: boolean; role?: KeyRole } | undefined;
    if (!cfg?.auth) return;
    const apiKey = header(request.headers['x-api-key']);
    const authz = header(request.headers.authorization);
    const bearer = authz && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, '').trim() : undefined;
    const principal = await auth.authenticate({ apiKey, bearer });
    request.principal = principal;
    await limits?.forPrincipal(principal);
    const need = cfg.role ?? 'admin';
    if (!roleAllows(principal.role, need)) throw new AppError('forbidden', roleRefusal(principal.role, need));
  });
}

function header(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? s.trim() : undefined;
}
