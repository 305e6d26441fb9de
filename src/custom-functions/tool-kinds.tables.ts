/** Tables of the tool-kinds domain (custom functions, MCP registry, organization skills): migration 0006. */
export interface ToolKindsTables {
  custom_functions: {
    id: string;
    organization_id: string;
    name: string;
    description: string;
    code: string;
    /** JSON text; '{}' when none was given. */
    input_schema: string;
    status: string;
    analysis_error_details: string | null;
    created_at: number;
    updated_at: number;
  };
  mcp_servers: {
    id: string;
    organization_id: string;
    name: string;
    description: string;
    url: string;
    transport: string;
    auth_type: string;
    /** Sealed with the SecretBox; null when unset. */
    api_key_sealed: string | null;
    client_id: string | null;
    client_secret_sealed: string | null;
    /** JSON array text. */
    additional_scopes: string;
    share_user_token_across_other_agents: number;
    /** Sealed JSON object of header name -> value (values can be credentials). */
    headers_sealed: string | null;
    /** JSON array text, or null for every tool. */
    allowed_tools: string | null;
    created_at: number;
    updated_at: number;
  };
  skills: {
    organization_id: string;
    name: string;
    description: string;
    instructions: string;
    created_at: number;
    updated_at: number;
  };
}
