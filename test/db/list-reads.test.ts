import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.js';
import { GatedListReads, ThreadedListReads } from '../../src/db/list-reads.js';
import { AppError } from '../../src/errors.js';
import { createPgDatabase, TEST_DBS } from '../support/databases.js';

/**
 * Reads whose cost grows with the data (the task lists) must not hold what every other request needs
 * (list-reads.ts): on libsql they run on a reader thread with its own connection; on PostgreSQL a few at a time.
 */

/** A read of ~0.5-1 s on SQLite: counting a recursive sequence, no table needed. */
const slowSqlite = (d: Db, steps = 2_000_000) =>
  d.kysely.selectNoFrom(sql<number>`(with recursive c(x) as (select 1 union all select x + 1 from c where x < ${steps}) select count(*) from c)`.as('n'));

describe('list reads on libsql (a database file)', () => {
  let dir: string;
  let db: Db | undefined;
  const extra: ThreadedListReads[] = [];
  afterEach(async () => {
    await Promise.all(extra.splice(0).map((r) => r.close()));
    await db?.close();
    db = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(): Promise<Db> {
    dir = mkdtempSync(join(tmpdir(), 'agentry-lists-'));
    db = openDatabase({ sqlitePath: join(dir, 'x.db') });
    await sql`create table items (id integer primary key, name text not null)`.execute(db.kysely);
    return db;
  }
  const items = (d: Db) => d.kysely.selectFrom('items' as never).select(['id', 'name'] as never).orderBy('id' as never);

  it('run on a thread of their own: the event loop keeps turning while a long read runs', async () => {
    const d = await open();
    const order: string[] = [];
    const read = d.lists.all('org', slowSqlite(d)).then((rows) => {
      order.push('read');
      return rows;
    });
    await new Promise((r) => setTimeout(r, 20)).then(() => order.push('timer'));
    expect(await read).toEqual([{ n: 2_000_000 }]);
    // Inline, the read would have held the loop for its whole length and ended first.
    expect(order).toEqual(['timer', 'read']);
  });

  it('see what the main connection committed just before', async () => {
    const d = await open();
    await sql`insert into items (name) values ('a'), ('b')`.execute(d.kysely);
    expect(await d.lists.all('org', items(d))).toEqual([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]);
    await sql`insert into items (name) values ('c')`.execute(d.kysely);
    await sql`delete from items where id = 1`.execute(d.kysely);
    expect(await d.lists.all('org', items(d))).toEqual([{ id: 2, name: 'b' }, { id: 3, name: 'c' }]);
  });

  it('cannot write, whatever statement reaches them', async () => {
    const d = await open();
    const insert = d.kysely.insertInto('items' as never).values({ name: 'x' } as never);
    await expect(d.lists.all('org', insert)).rejects.toThrow(/list read failed: .*(readonly|read-only)/i);
    expect((await sql`select count(*) as n from items`.execute(d.kysely)).rows).toEqual([{ n: 0 }]);
  });

  it("refuse an organization's reads past its queue (429) and serve the others' in turn", async () => {
    const d = await open();
    const done: string[] = [];
    const track = (owner: string, p: Promise<unknown>) => p.then(() => done.push(owner));
    const first = track('A', d.lists.all('A', slowSqlite(d, 1_000_000)));
    const waiting = Array.from({ length: 32 }, () => track('A', d.lists.all('A', items(d))));
    const refused = await d.lists.all('A', items(d)).catch((e) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ status: 429, retryAfter: 1 });
    // Queued behind 32 of A's reads, B's read is served after one of them.
    const b = track('B', d.lists.all('B', items(d)));
    await Promise.all([first, ...waiting, b]);
    expect(done.indexOf('B')).toBeLessThanOrEqual(2);
    expect(done.filter((o) => o === 'A')).toHaveLength(33);
  });

  it('abandon a read past the deadline with a 503 that says to narrow it, and serve the next', async () => {
    const d = await open();
    const reads = new ThreadedListReads(join(dir, 'x.db'), { timeoutMs: 150 });
    extra.push(reads);
    await reads.all('org', items(d)); // the thread is up: the deadline counts the read alone
    const e = await reads.all('org', slowSqlite(d, 5_000_000)).catch((err) => err);
    expect(e).toBeInstanceOf(AppError);
    expect(e).toMatchObject({ status: 503 });
    expect(e.message).toMatch(/narrow it/);
    await sql`insert into items (name) values ('after')`.execute(d.kysely);
    expect(await reads.all('org', items(d))).toEqual([{ id: 1, name: 'after' }]);
    // The abandoned statement runs to its end and its thread then exits: terminating a thread inside a libsql
    // statement aborts the whole process (a panic in its bindings) when the statement returns, which the wait
    // past its end would show as this test file's crash.
    await reads.close();
    await new Promise((r) => setTimeout(r, 2000));
  });

  it('give their thread back after a while without reads, and start one again on the next', async () => {
    const d = await open();
    const reads = new ThreadedListReads(join(dir, 'x.db'), { idleMs: 100 });
    extra.push(reads);
    expect(reads.threads).toBe(0);
    await reads.all('org', items(d));
    expect(reads.threads).toBe(1);
    await expect.poll(() => reads.threads, { timeout: 5000 }).toBe(0);
    await sql`insert into items (name) values ('again')`.execute(d.kysely);
    expect(await reads.all('org', items(d))).toEqual([{ id: 1, name: 'again' }]);
    expect(reads.threads).toBe(1);
  });

  it('stop with the database, their thread ended rather than waited out', async () => {
    const d = await open();
    await d.lists.all('org', items(d));
    const started = performance.now();
    await d.close();
    // Closing waits at most 5 s for a reader thread to end; an idle one ends at once (it used to be kept alive).
    expect(performance.now() - started).toBeLessThan(3000);
    db = undefined;
    await expect(d.lists.all('org', items(d))).rejects.toMatchObject({ status: 503 });
  });
});

describe.runIf(TEST_DBS.includes('postgres'))('list reads on PostgreSQL', () => {
  let db: Db | undefined;
  let drop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await db?.close();
    await drop?.();
    db = undefined;
  });

  it('run a third of the pool at most, so other queries still get a connection', async () => {
    const pgdb = await createPgDatabase();
    drop = pgdb.drop;
    db = openDatabase({ url: pgdb.url, sqlitePath: ':memory:', poolSize: 6 });
    const d = db;
    const sleep = () => d.kysely.selectNoFrom(sql<string>`pg_sleep(0.3)::text`.as('s'));
    const started = performance.now();
    const ends: number[] = [];
    const reads = Array.from({ length: 5 }, () => d.lists.all('org', sleep()).then(() => ends.push(performance.now() - started)));
    // Two at a time: the pool keeps four connections for everything else.
    await new Promise((r) => setTimeout(r, 50));
    const inUse = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where query like '%pg_sleep(0.3)%' and state = 'active' and pid <> pg_backend_pid()`.execute(d.kysely);
    expect(inUse.rows[0].n).toBe(2);
    await Promise.all(reads);
    // Five reads of 0.3 s, two at a time, take three rounds.
    expect(Math.max(...ends)).toBeGreaterThanOrEqual(850);
  });

  it('are cancelled by the server past the deadline, answered 503 with advice to narrow them', async () => {
    const pgdb = await createPgDatabase();
    drop = pgdb.drop;
    db = openDatabase({ url: pgdb.url, sqlitePath: ':memory:' });
    const reads = new GatedListReads(db.kysely, 2, 200);
    const e = await reads.all('org', db.kysely.selectNoFrom(sql<string>`pg_sleep(5)::text`.as('s'))).catch((err) => err);
    expect(e).toBeInstanceOf(AppError);
    expect(e).toMatchObject({ status: 503, message: expect.stringMatching(/longer than 0.2 s; narrow it/) });
    // The deadline was the transaction's own: the connection went back to the pool without it.
    const [row] = (await sql<{ t: string }>`select current_setting('statement_timeout') as t`.execute(db.kysely)).rows;
    expect(row.t).toBe('0');
  });
});
