import { sql } from 'kysely';
import type { MigrationDef } from './migration.js';

/** Workflows (docs/workflows.md): the row with its published definition and draft, and the immutable versions. */
export const workflows0024: MigrationDef = {
  name: '0024_workflows',
  async up(db) {
    await db.schema
      .createTable('workflows')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('current_version', 'integer', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('draft', 'text')
      .addColumn('agent_id', 'text')
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('deleted_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('workflows_org_name_live')
      .on('workflows')
      .columns(['organization_id', 'name'])
      .unique()
      .where(sql.ref('deleted_at'), 'is', null)
      .execute();
    await db.schema.createIndex('workflows_org_created').on('workflows').columns(['organization_id', 'created_at']).execute();
    await db.schema
      .createTable('workflow_versions')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('workflow_versions_pk', ['workflow_id', 'version'])
      .execute();
  },
};
