import { z } from 'zod';
import { ROLES } from '../../auth/roles.js';
import type { Container } from '../../container.js';
import { PageQuery, type Router } from '../router.js';
import { NUL_MESSAGE } from '../../lib/nul-text.js';

const tags = ['api_keys'];
const KeyParams = z.strictObject({ key_id: z.string().uuid() });
// PostgreSQL cannot store NUL in text: refused here (422) rather than failing the insert.
const KeyName = z.string().min(1).max(200).refine((v) => !v.includes('\u0000'), NUL_MESSAGE);
const CreateKeyBody = z.strictObject({ name: KeyName.nullable().optional(), role: z.enum(ROLES).default('member') });
const KeyView = z.object({
  id: z.string(),
  name: z.string().nullable(),
  role: z.enum(ROLES),
  created_by: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  active: z.boolean(),
});

/** API keys of the caller's organization (docs/access.md). Every route here is an admin's. */
export function apiKeysRoutes(router: Router, c: Container): void {
  const role = 'admin' as const;
  router.route({ method: 'GET', url: '/v1/api_keys', summary: 'API keys of the organization (never the keys themselves)', tags, role, query: PageQuery }, ({ principal, query }) =>
    c.apiKeys.list(principal.organizationId, query.page, query.per_page),
  );
  router.route(
    { method: 'POST', url: '/v1/api_keys', summary: 'Create an API key; the key is in this answer only', tags, role, body: CreateKeyBody, status: 201, response: KeyView.extend({ key: z.string() }) },
    ({ principal, body }) => c.apiKeys.create(principal.organizationId, body, principal),
  );
  router.route({ method: 'DELETE', url: '/v1/api_keys/:key_id', summary: 'Revoke an API key, at once on every process', tags, role, params: KeyParams, response: KeyView }, ({ principal, params }) =>
    c.apiKeys.revoke(principal.organizationId, params.key_id),
  );
}
