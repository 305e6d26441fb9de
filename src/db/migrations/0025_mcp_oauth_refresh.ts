import type { MigrationDef } from './migration.js';

/**
 * `mcp_user_tokens.refresh_token_sealed`: the refresh token an authorization server gave with a user's access token
 * (the interactive OAuth flow, src/mcp/mcp-oauth.service.ts), sealed like the access token; null when there is none
 * (tokens stored with PUT .../user_tokens/{user_id} never have one).
 */
export const mcpOauthRefresh0025: MigrationDef = {
  name: '0025_mcp_oauth_refresh',
  async up(db) {
    await db.schema.alterTable('mcp_user_tokens').addColumn('refresh_token_sealed', 'text').execute();
  },
};
