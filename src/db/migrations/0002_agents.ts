import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

export const agents0002: MigrationDef = {
  name: '0002_agents',
  async up(db) {
    await db.schema
      .createTable('agents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('unique_name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('current_version', 'integer', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('draft', 'text')
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('deleted_at', 'bigint')
      .execute();
    // unique_name is never reused, even after a delete; a name is free again once its agent is deleted.
    await db.schema.createIndex('agents_org_unique_name').on('agents').columns(['organization_id', 'unique_name']).unique().execute();
    await db.schema
      .createIndex('agents_org_name_live')
      .on('agents')
      .columns(['organization_id', 'name'])
      .unique()
      .where(sql.ref('deleted_at'), 'is', null)
      .execute();
    await db.schema.createIndex('agents_org_created').on('agents').columns(['organization_id', 'created_at']).execute();
    await db.schema
      .createTable('agent_versions')
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_versions_pk', ['agent_id', 'version'])
      .execute();
  },
};
