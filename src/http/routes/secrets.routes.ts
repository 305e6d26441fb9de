import { z } from 'zod';
import type { Container } from '../../container.js';
import { PageQuery, type Router } from '../router.js';

const tags = ['secrets'];
const SecretParams = z.strictObject({ secret_name: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/) });
const PutSecretBody = z.strictObject({ value: z.string().min(1).max(65_536), description: z.string().max(1024).nullable().optional() });
const SecretView = z.object({ name: z.string(), description: z.string().nullable(), created_at: z.string(), updated_at: z.string() });

/** Organization secrets (docs/contract.md#llm-credentials): values go in, never come out. */
export function secretsRoutes(router: Router, c: Container): void {
  router.route({ method: 'GET', url: '/v1/secrets', summary: 'Secret names and metadata (never values)', tags, query: PageQuery }, ({ principal, query }) =>
    c.secrets.list(principal.organizationId, query.page, query.per_page),
  );
  router.route({ method: 'GET', url: '/v1/secrets/:secret_name', summary: "One secret's metadata", tags, params: SecretParams, response: SecretView }, ({ principal, params }) =>
    c.secrets.get(principal.organizationId, params.secret_name),
  );
  router.route(
    { method: 'PUT', url: '/v1/secrets/:secret_name', summary: 'Create or replace a secret (201 created, 200 replaced)', tags, role: 'admin', params: SecretParams, body: PutSecretBody, response: SecretView },
    async ({ principal, params, body, reply }) => {
      const { secret, created } = await c.secrets.put(principal.organizationId, params.secret_name, body.value, body.description);
      reply.code(created ? 201 : 200);
      return secret;
    },
  );
  router.route({ method: 'DELETE', url: '/v1/secrets/:secret_name', summary: 'Delete a secret', tags, role: 'admin', params: SecretParams, status: 204 }, async ({ principal, params, reply }) => {
    await c.secrets.delete(principal.organizationId, params.secret_name);
    return reply.code(204).send();
  });
}
