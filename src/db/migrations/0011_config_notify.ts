import { sql } from 'kysely';
import { CONFIG_CHANNEL, CONFIG_TABLES } from '../config-change.js';
import type { MigrationDef } from './migration.js';

/**
 * PostgreSQL: every committed change to a configuration table notifies CONFIG_CHANNEL, so each process can keep
 * its hot-path caches exact (Db.configVersion, src/db/pg-config-watch.ts). Statement-level triggers: a bulk
 * change is one notification, and PostgreSQL folds identical notifications of one transaction into one, sent at
 * commit (never for a rolled-back change). SQLite needs nothing: `PRAGMA data_version` tells the same.
 */
export const configNotify0011: MigrationDef = {
  name: '0011_config_notify',
  async up(db, dialect) {
    if (dialect !== 'postgres') return;
    await sql
      .raw(
        `create or replace function agentry_config_changed() returns trigger language plpgsql as $$
         begin perform pg_notify('${CONFIG_CHANNEL}', ''); return null; end $$`,
      )
      .execute(db);
    for (const table of CONFIG_TABLES) {
      await sql
        .raw(
          `create trigger agentry_config_changed after insert or update or delete or truncate on ${table}
           for each statement execute function agentry_config_changed()`,
        )
        .execute(db);
    }
  },
};
