import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { PAGE_FILES, securePageScope } from '../page-scope.js';

/**
 * GET /docs: the API reference, Swagger UI (swagger-ui-dist, served from node_modules as it is published) reading
 * GET /openapi.json. No CDN and no inline script: the page loads the bundle and our initializer (docs-init.js)
 * from this origin. Its policy is the console's but for styles: Swagger UI sets style attributes as it renders.
 * "Try it out" sends requests from the browser with the key typed into "Authorize", which stays in that page.
 */

const SWAGGER_ROOT = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const OWN_ROOT = fileURLToPath(new URL('./public/', import.meta.url));
/** The files of swagger-ui-dist the page uses; nothing else of the package is reachable. */
const SWAGGER_FILES = new Set(['/swagger-ui.css', '/swagger-ui-bundle.js', '/favicon-32x32.png']);

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

export async function apiDocsPlugin(app: FastifyInstance): Promise<void> {
  await app.register(async (scope) => {
    securePageScope(scope, SECURITY_HEADERS);
    await scope.register(fastifyStatic, {
      root: SWAGGER_ROOT,
      prefix: '/docs/assets/',
      ...PAGE_FILES,
      allowedPath: (pathName) => SWAGGER_FILES.has(pathName),
    });
    await scope.register(fastifyStatic, {
      root: OWN_ROOT,
      prefix: '/docs/',
      ...PAGE_FILES,
      decorateReply: false,
      allowedPath: (pathName) => pathName === '/docs-init.js',
    });
    const html = readFileSync(`${OWN_ROOT}index.html`, 'utf8');
    scope.get('/docs', (_request, reply) => reply.type('text/html; charset=utf-8').send(html));
  });
}
