import type { KeyRole } from './roles.js';

/** Who is calling, established by the auth hook and passed to every service call. */
export interface Principal {
  organizationId: string;
  kind: 'api_key' | 'jwt';
  /** The API key id, or the JWT subject: what `created_by` records. */
  subject: string;
  /** What the caller may do (src/auth/roles.ts). */
  role: KeyRole;
}

/** The owner a personal agent records: unique across kinds (a JWT subject may look like a key id). */
export function ownerOf(p: Pick<Principal, 'kind' | 'subject'>): string {
  return `${p.kind}:${p.subject}`;
}
