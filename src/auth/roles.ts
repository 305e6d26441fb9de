/**
 * Roles of API keys (and JWT principals), from least to most. A route states the least role it needs (the router's
 * `role`, default: read-only for GET, member otherwise); the auth hook refuses the others with 403. The matrix is
 * documented in docs/access.md:
 * - read-only: reads (GET) of everything but the key list;
 * - member: reads, plus creating, changing, deleting and running agents, tasks, tools, connectors, knowledge bases;
 * - admin: everything, including API keys and organization secrets.
 */
export const ROLES = ['read-only', 'member', 'admin'] as const;
export type KeyRole = (typeof ROLES)[number];

const RANK: Record<KeyRole, number> = { 'read-only': 0, member: 1, admin: 2 };

export function isRole(v: unknown): v is KeyRole {
  return typeof v === 'string' && (ROLES as readonly string[]).includes(v);
}

export function roleAllows(have: KeyRole, need: KeyRole): boolean {
  return RANK[have] >= RANK[need];
}

/** The least role a route needs when it does not say: reading is read-only, anything else is a member's. */
export function defaultRouteRole(method: string): KeyRole {
  return method === 'GET' || method === 'HEAD' ? 'read-only' : 'member';
}

export function roleRefusal(have: KeyRole, need: KeyRole): string {
  return `This API key's role (${have}) does not allow this operation; it needs ${need}`;
}
