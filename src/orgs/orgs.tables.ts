import type { Generated } from 'kysely';

export interface CoreTables {
  organizations: { id: string; name: string; created_at: number };
  api_keys: {
    id: string;
    organization_id: string;
    lookup: string;
    key_hash: string;
    name: string | null;
    created_at: number;
    revoked_at: number | null;
    /** admin | member | read-only (src/auth/roles.ts); keys created before roles are admins. */
    role: Generated<string>;
    /** The principal that created the key through the API (null: the CLI, the bootstrap key). */
    created_by: string | null;
  };
  org_secrets: {
    organization_id: string;
    name: string;
    sealed_value: string;
    description: string | null;
    created_at: number;
    updated_at: number;
  };
}
