export interface McpTables {
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
}

/** Migration 0008: OAuth access tokens stored per user for registry servers of auth_type oauth2. */
export interface McpUserTokensTables {
  mcp_user_tokens: {
    organization_id: string;
    /** The registry id (mcp_servers.id). */
    mcp_server_id: string;
    /** The id the tasks carry as `user_id` (`input.user.id`, the webhook's `user_id`). */
    user_id: string;
    /** Sealed with the SecretBox; never returned, never logged. */
    access_token_sealed: string;
    /** Migration 0025: the refresh token of a token obtained by the OAuth flow, sealed; null when none. */
    refresh_token_sealed: string | null;
    /** Epoch ms; null: does not expire. */
    expires_at: number | null;
    created_at: number;
    updated_at: number;
  };
}
