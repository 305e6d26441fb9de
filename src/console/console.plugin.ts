import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { PAGE_FILES, securePageScope } from '../http/page-scope.js';

/** The console's files: plain ES modules and CSS that browsers run as they are, so `npm start` needs no build. */
export const CONSOLE_ROOT = fileURLToPath(new URL('./public/', import.meta.url));

/** Assets live under this prefix so they never clash with /v1, /health or /openapi.json. */
export const CONSOLE_ASSET_PREFIX = '/console/';

/**
 * Everything the console loads comes from this origin: no CDN, no inline script, no framing. The API key the
 * console holds is worth protecting from injected script, so the policy is strict rather than convenient.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // Files change with the server, not with a build hash: let the browser revalidate (ETag) on every load.
  'cache-control': 'no-cache',
};

/**
 * Serves the monitoring console: `GET /` is the single page, assets under /console/. The console is a client of
 * the public /v1 API with the key the user signs in with; it has no server-side session and no routes of its own.
 * Registered in its own encapsulated scope so @fastify/static's reply decorators stay private to it.
 */
export async function consolePlugin(app: FastifyInstance): Promise<void> {
  await app.register(async (scope) => {
    // The file server refuses directories with a 403 of its own; to a visitor every path that is not a console file
    // is simply not found.
    securePageScope(scope, SECURITY_HEADERS);
    await scope.register(fastifyStatic, {
      root: CONSOLE_ROOT,
      prefix: CONSOLE_ASSET_PREFIX,
      ...PAGE_FILES,
      wildcard: true,
      // The .d.ts files beside the modules type them for the TypeScript tests; browsers have no use for them.
      allowedPath: (pathName) => !pathName.endsWith('.d.ts'),
    });
    scope.get('/', (_request, reply) => reply.type('text/html; charset=utf-8').sendFile('index.html'));
  });
}
