import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import Sqlite from 'libsql';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.js';

/**
 * libsql checkpoints its WAL inside the commit that crosses the threshold, stalling the process for tens of
 * milliseconds; under write load a thread does it instead (sqlite-checkpointer.ts). These pin down that the thread
 * starts when the WAL grows, really copies the WAL back, leaves the data whole, and stops with the database.
 */
describe('WAL checkpoint thread (libsql)', () => {
  let dir: string;
  let db: Db | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  function open(): Db {
    dir = mkdtempSync(join(tmpdir(), 'agentry-ckpt-'));
    db = openDatabase({ sqlitePath: join(dir, 'x.db') });
    return db;
  }
  const autocheckpoint = async (d: Db) => Number(Object.values((await sql`PRAGMA wal_autocheckpoint`.execute(d.kysely)).rows[0] as object)[0]);
  async function write(d: Db, rows: number, bytes: number): Promise<void> {
    await sql`create table if not exists blobs (id integer primary key, body text not null)`.execute(d.kysely);
    for (let i = 0; i < rows; i++) await sql`insert into blobs (body) values (${'x'.repeat(bytes)})`.execute(d.kysely);
  }

  it('is not started while the WAL is small: a process that writes little does not pay for the thread', async () => {
    const d = open();
    await write(d, 20, 100);
    await new Promise((r) => setTimeout(r, 1200));
    expect(d.checkpointer!.status().running).toBe(false);
    expect(await autocheckpoint(d)).toBe(10_000);
  });

  it('starts once the WAL passes 2 MB, takes over from the commits and copies the WAL back', async () => {
    const d = open();
    await write(d, 1200, 4000);
    await expect.poll(() => d.checkpointer!.status().running, { timeout: 5000 }).toBe(true);
    // The commits no longer checkpoint below the fallback threshold.
    expect(await autocheckpoint(d)).toBe(50_000);
    await write(d, 50, 4000);
    await expect.poll(() => d.checkpointer!.status().checkpoints, { timeout: 5000 }).toBeGreaterThan(0);
    // Idle now: a pass copies back every frame of the WAL.
    await expect.poll(() => { const last = d.checkpointer!.status().last; return last !== undefined && last.log > 0 && last.checkpointed === last.log; }, { timeout: 5000 }).toBe(true);
    // Every row is there, as another connection reads the file.
    const other = new Sqlite(join(dir, 'x.db'));
    expect(other.prepare('select count(*) as n from blobs').get()).toMatchObject({ n: 1250 });
    other.close();
  });

  it('stops with the database', async () => {
    const d = open();
    d.checkpointer!.start();
    await write(d, 5, 100);
    await expect.poll(() => d.checkpointer!.status().checkpoints, { timeout: 5000 }).toBeGreaterThan(0);
    await d.close();
    db = undefined;
    expect(d.checkpointer!.status().running).toBe(false);
  });
});
