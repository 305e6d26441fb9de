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
  /**
   * Data work too long for the migrations' transaction, which holds the locks of every `up` (an added column's
   * exclusive lock blocks even reads of its table) until it commits: run after that commit, in short transactions of
   * its own, by every process that starts, until nothing is left. It must resume where a stopped process left it,
   * cope with other processes doing the same, and cost next to nothing once done.
   */
  backfill?(db: Kysely<any>, dialect: DialectName, ctx: MigrationContext): Promise<void>;
}

/** What a data migration may need beyond SQL. */
export interface MigrationContext {
  /** The master key's box, for migrations that seal stored values; absent in tools that migrate empty databases. */
  secretBox?: SecretBox;
  /** Where a long backfill says what it did; silent when absent. */
  log?: { info(fields: object, msg: string): void };
}
