import type { MigrationDef } from './migration.js';

/**
 * OAuth access tokens stored per user for MCP registry servers of auth_type oauth2 (issue 6): one per
 * organization, server and user id, the token sealed. The runtime uses it when an invocation's `user_tokens`
 * has none for the server's graph item.
 */
export const mcpUserTokens0008: MigrationDef = {
  name: '0008_mcp_user_tokens',
  async up(db) {
    await db.schema
      .createTable('mcp_user_tokens')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('mcp_server_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('access_token_sealed', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('mcp_user_tokens_pk', ['organization_id', 'mcp_server_id', 'user_id'])
      .execute();
  },
};
