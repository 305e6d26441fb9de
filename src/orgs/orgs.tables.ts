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
