import type { Generated } from 'kysely';

export interface AgentTables {
  /** One row per agent. `config` is the current published version, `draft` the staged edit (null: none). */
  agents: {
    id: string;
    organization_id: string;
    /** The working copy's name (draft if any): unique among live agents of the organization. */
    name: string;
    unique_name: string;
    status: string;
    current_version: number;
    /** JSON of the published AgentConfig, secrets sealed. */
    config: string;
    draft: string | null;
    created_by: string | null;
    /** The authenticated principal that created it (`api_key:<id>` or `jwt:<sub>`); null for agents older than owners. */
    owner: string | null;
    /** 1 while the published `access_scope` is personal: only the owner (and admins) see it (src/auth/agent-access.ts). */
    personal: Generated<number>;
    created_at: number;
    updated_at: number;
    /** Soft delete: tasks keep pointing at the row. */
    deleted_at: number | null;
  };
  /** Every published version, immutable. */
  agent_versions: {
    agent_id: string;
    organization_id: string;
    version: number;
    config: string;
    created_at: number;
  };
}
