import type { MigrationDef } from './migration.js';

export const connectors0003: MigrationDef = {
  name: '0003_connectors',
  async up(db) {
    await db.schema
      .createTable('connectors')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('openapi_version', 'text', (c) => c.notNull())
      .addColumn('server_url', 'text')
      .addColumn('total_operations', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('connectors_org_created').on('connectors').columns(['organization_id', 'created_at']).execute();
    await db.schema
      .createTable('connector_documents')
      .addColumn('connector_id', 'text', (c) => c.primaryKey().references('connectors.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('document', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('connector_operations')
      .addColumn('connector_id', 'text', (c) => c.notNull().references('connectors.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('operation_id', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('summary', 'text')
      .addColumn('description', 'text')
      .addColumn('tags', 'text', (c) => c.notNull())
      .addColumn('search_text', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('connector_operations_pk', ['connector_id', 'id'])
      .execute();
    await db.schema.createIndex('connector_operations_opid').on('connector_operations').columns(['connector_id', 'operation_id']).execute();
    await db.schema
      .createTable('connector_connections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('connector_id', 'text', (c) => c.notNull().references('connectors.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('base_url', 'text')
      .addColumn('security', 'text')
      .addColumn('headers', 'text')
      .addColumn('general_params', 'text')
      .addColumn('timeout_ms', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('connector_connections_connector').on('connector_connections').columns(['organization_id', 'connector_id']).execute();
  },
};
