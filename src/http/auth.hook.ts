import type { FastifyInstance } from 'fastify';
import type { AuthService } from '../auth/auth.service.js';

/** Authenticates every route registered with `config.auth`; the principal rides on the request. */
export function installAuthHook(app: FastifyInstance, auth: AuthService): void {
  app.addHook('onRequest', async (request) => {
    const cfg = request.routeOptions.config as { auth?: boolean } | undefined;
    if (!cfg?.auth) return;
    const apiKey = header(request.headers['x-api-key']);
    const authz = header(request.headers.authorization);
    const bearer = authz && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, '').trim() : undefined;
    request.principal = await auth.authenticate({ apiKey, bearer });
  });
}

function header(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? s.trim() : undefined;
}
