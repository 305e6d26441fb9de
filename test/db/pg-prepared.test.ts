import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.js';
import { createPgDatabase } from '../support/databases.js';

/**
 * Parameterised statements go to PostgreSQL as named prepared statements (pg-pool.ts), so that a statement run on
 * every task is parsed and planned once per connection. The worker's outcome statement is about 3,000 characters;
 * sent unnamed it was parsed and planned on every run (0.6-0.8 ms of the database's time each, measured).
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
