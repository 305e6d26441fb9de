import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.js';
import { FIRST_PLAN_REFRESH } from '../../src/db/pg-pool.js';
import { createPgDatabase } from '../support/databases.js';

/**
 * Parameterised statements go to PostgreSQL as named prepared statements (pg-pool.ts), so that a statement run on
 * every task is parsed once per connection. The worker's outcome statement is about 3,000 characters; sent unnamed
 * it was parsed and planned on every run (0.6-0.8 ms of the database's time each, measured).
 */
describe('prepared statements (PostgreSQL)', () => {
  let pg: Awaited<ReturnType<typeof createPgDatabase>>;
  let db: Db;
  beforeAll(async () => {
    pg = await createPgDatabase();
    // One connection: the prepared statements listed are the ones this test's statements made.
    db = openDatabase({ url: pg.url, sqlitePath: '', poolSize: 1 });
  });
  afterAll(async () => {
    await db.close();
    await pg.drop();
  });

  const prepared = async (marker: string) =>
    Number((await sql<{ n: string }>`select count(*) as n from pg_prepared_statements where statement like ${`%${marker}%`} and statement not like '%pg_prepared_statements%'`.execute(db.kysely)).rows[0]!.n);

  it('prepares a long statement run again and again, such as the outcome statement, once', async () => {
    const text = (n: number) => sql`select ${n}::int as v /* long-statement ${sql.raw('x'.repeat(3000))} */`;
    for (let i = 0; i < 3; i++) expect((await text(i).execute(db.kysely)).rows).toEqual([{ v: i }]);
    expect(await prepared('long-statement')).toBe(1);
  });

  it('sends a very long text (a large multi-row insert) unnamed: such texts rarely repeat', async () => {
    const text = sql`select ${1}::int as v /* huge-statement ${sql.raw('x'.repeat(20_000))} */`;
    await text.execute(db.kysely);
    await text.execute(db.kysely);
    expect(await prepared('huge-statement')).toBe(0);
  });
});

/**
 * A prepared statement's generic plan is made from the tables as they were when the connection settled on it. A
 * fresh deployment's first runs see an empty `tasks` table, where a hash join over a sequential scan is the cheapest
 * plan for the worker's outcome statement (an update joined to unnest() arrays); kept for the life of a busy
 * connection, it read the whole table on every run. A connection plans its statements again after 64 checkouts,
 * then 128 more, and so on (pg-pool.ts).
 */
describe('plans as the table grows (PostgreSQL)', () => {
  let pg: Awaited<ReturnType<typeof createPgDatabase>>;
  let db: Db;
  beforeAll(async () => {
    pg = await createPgDatabase();
    db = openDatabase({ url: pg.url, sqlitePath: '', poolSize: 1 });
    // Without autovacuum: its ANALYZE after the bulk insert below would invalidate the cached plan at a moment of its
    // choosing, and the stale plan this test shows would be gone before it is looked at (seen once under CI's load).
    await sql`create table grows (org text not null, id text not null, fence bigint not null, v int not null default 0, primary key (org, id)) with (autovacuum_enabled = false)`.execute(
      db.kysely,
    );
  });
  afterAll(async () => {
    await db.close();
    await pg.drop();
  });

  const update = (k: Kysely<never>, ids: string[]) =>
    sql`update grows set v = grows.v + 1 from unnest(${ids.map(() => 'o')}::text[], ${ids}::text[], ${ids.map(() => 1)}::bigint[]) as u(org, id, fence)
      where grows.org = u.org and grows.id = u.id and grows.fence = u.fence`.execute(k);
  /** This backend's sequential scans of `grows` not yet reported to the statistics (each reads the whole table). */
  const seqScans = async (k: Kysely<never>) => Number((await sql<{ n: string }>`select pg_stat_get_xact_numscans('grows'::regclass) as n`.execute(k)).rows[0]!.n);
  /** Runs `update` in a transaction (no statistics are reported inside one) and counts the sequential scans it made. */
  const scansOfOneUpdate = (ids: string[]) =>
    db.kysely.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      try {
        const before = await seqScans(conn as never);
        expect(Number((await update(conn as never, ids)).numAffectedRows)).toBe(ids.length);
        return (await seqScans(conn as never)) - before;
      } finally {
        await sql`rollback`.execute(conn);
      }
    });

  it('an update joined to unnest() becomes an index lookup again once the table has grown', async () => {
    // Batches of 30 runs (as a busy worker's outcomes come), often enough on a small table for PostgreSQL to settle
    // on its generic plan for the statement (from the sixth execution on, when it is no dearer than the custom ones).
    const batch = Array.from({ length: 30 }, (_, i) => `x${i}`);
    await sql`insert into grows (org, id, fence) select 'o', x, 1 from unnest(${[...batch, 'a', 'b']}::text[]) x`.execute(db.kysely);
    await db.kysely.connection().execute(async (conn) => {
      for (let i = 0; i < 10; i++) await update(conn as never, batch);
    });
    await sql`insert into grows (org, id, fence) select 'o', 'r' || g, 1 from generate_series(1, 50000) g`.execute(db.kysely);
    // The plan made on the small table is still the connection's: a sequential scan of 50,032 rows for two.
    expect(await scansOfOneUpdate(['a', 'b'])).toBe(1);
    // Until the connection's next plan refresh.
    for (let i = 0; i < FIRST_PLAN_REFRESH; i++) await sql`select 1`.execute(db.kysely);
    expect(await scansOfOneUpdate(['a', 'b'])).toBe(0);
  });
});
