import type { MigrationDef } from './migration.js';

/** Uploaded files (webhooks, knowledge documents) and the public webhook channel of each agent. */
export const filesWebhooks0005: MigrationDef = {
  name: '0005_files_webhooks',
  async up(db) {
    await db.schema
      .createTable('files')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('mime_type', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('blob_key', 'text', (c) => c.notNull())
      // Extracted text; null when the type yields none.
      .addColumn('text', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('files_org_idx').on('files').columns(['organization_id', 'created_at']).execute();

    // A row exists while the public URL is enabled; disabling deletes it, so a revoked secret cannot match.
    await db.schema
      .createTable('webhook_channels')
      .addColumn('agent_id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      // SHA-256 of the secret: the secret itself is never stored.
      .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
