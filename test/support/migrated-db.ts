import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDatabase } from './databases.js';

/**
 * A fresh, migrated database of `kind` with no container around it, for tests of the data layer itself: a new
 * PostgreSQL database, or a libsql file in a temporary folder. `close` removes it. `before`: migrated only up to that
 * migration (a data migration's test writes rows as the previous version did, then migrates).
 */
export async function openMigratedDb(kind: 'sqlite' | 'postgres', opts: { before?: string } = {}): Promise<{ db: Db; close(): Promise<void> }> {
  if (kind === 'postgres') {
    const pg = await createPgDatabase();
    const db = openDatabase({ url: pg.url, sqlitePath: '' });
    await migrate(db, {}, opts);
    return {
      db,
      async close() {
        await db.close();
        await pg.drop();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentry-db-'));
  const db = openDatabase({ sqlitePath: join(dir, 'x.db') });
  await migrate(db, {}, opts);
  return {
    db,
    async close() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
