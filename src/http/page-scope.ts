import type { FastifyInstance } from 'fastify';

/**
 * What every browser page this service serves (the console, the API reference) needs in its encapsulated scope:
 * its security headers on every answer, and the file server's own 403 (a directory) and 404 answered like any
 * unknown path, `404 {"detail":"Not Found"}`. Anything else goes to the app's error handler.
 */
export function securePageScope(scope: FastifyInstance, headers: Readonly<Record<string, string>>): void {
  scope.addHook('onSend', async (_request, reply) => {
    for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  });
  scope.setErrorHandler((err: Error & { statusCode?: number }, _request, reply) => {
    if (err.statusCode === 403 || err.statusCode === 404) return reply.code(404).send({ detail: 'Not Found' });
    throw err;
  });
}

/** @fastify/static options every page uses: no index file or listing, no dotfiles, freshness from the page's headers. */
export const PAGE_FILES = { index: false, list: false, dotfiles: 'deny', cacheControl: false } as const;
