import type { Kysely } from 'kysely';
import type { DialectName } from '../database.js';
import type { SecretBox } from '../../lib/secret-box.js';

/**
 * Forward-only migrations, applied in order on start. Never edit one that has shipped: add a new file and one line
 * in index.ts. Each receives the dialect for the few places SQL differs.
 */
export interface MigrationDef {
  name: string;
  up(db: Kysely<any>, dialect: DialectName, ctx: MigrationContext): Promise<void>;
}

/** What a data migration may need beyond SQL. */
export interface MigrationContext {
  /** The master key's box, for migrations that seal stored values; absent in tools that migrate empty databases. */
  secretBox?: SecretBox;
}
