import type { MigrationDef } from './migration.js';

export const core0001: MigrationDef = {
  name: '0001_core',
  async up(db) {
    await db.schema
      .createTable('organizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      // The first characters of the key, indexed, so lookup never compares a secret in SQL.
      .addColumn('lookup', 'text', (c) => c.notNull().unique())
      .addColumn('key_hash', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema
      .createTable('org_secrets')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('sealed_value', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('org_secrets_pk', ['organization_id', 'name'])
      .execute();
  },
};
