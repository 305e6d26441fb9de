import type { MigrationDef } from './migration.js';

/** Custom functions, the MCP server registry and organization skills (issue 6). */
export const toolKinds0006: MigrationDef = {
  name: '0006_tool_kinds',
  async up(db) {
    await db.schema
      .createTable('custom_functions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('input_schema', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('analysis_error_details', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('custom_functions_org_idx').on('custom_functions').columns(['organization_id', 'id']).execute();

    await db.schema
      .createTable('mcp_servers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('transport', 'text', (c) => c.notNull())
      .addColumn('auth_type', 'text', (c) => c.notNull())
      .addColumn('api_key_sealed', 'text')
      .addColumn('client_id', 'text')
      .addColumn('client_secret_sealed', 'text')
      .addColumn('additional_scopes', 'text', (c) => c.notNull())
      .addColumn('share_user_token_across_other_agents', 'integer', (c) => c.notNull())
      .addColumn('headers_sealed', 'text')
      .addColumn('allowed_tools', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('mcp_servers_org_idx').on('mcp_servers').columns(['organization_id', 'id']).execute();

    await db.schema
      .createTable('skills')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('instructions', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('skills_pk', ['organization_id', 'name'])
      .execute();
  },
};
