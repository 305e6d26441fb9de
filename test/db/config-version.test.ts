import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { VersionedCache } from '../../src/lib/versioned-cache.js';
import { createPgDatabase } from '../support/databases.js';

/**
 * The webhook hot path caches its channel and agent reads by Db.configVersion; these tests pin down that the
 * version moves for every change that matters (this process or another) and for nothing else.
 */
describe('configVersion (libsql)', () => {
  const open: Db[] = [];
  let dir: string;
  afterEach(async () => {
    for (const db of open.splice(0)) await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  async function two(): Promise<[Db, Db]> {
    dir = mkdtempSync(join(tmpdir(), 'agentry-cv-'));
    const a = openDatabase({ sqlitePath: join(dir, 'x.db') });
    open.push(a);
    await migrate(a);
    await a.kysely.insertInto('organizations').values({ id: 'org', name: 'org', created_at: 1 }).execute();
    const b = openDatabase({ sqlitePath: join(dir, 'x.db') });
    open.push(b);
    return [a, b];
  }

  it("moves on this connection's writes to configuration tables, not on task writes", async () => {
    const [a] = await two();
    const v0 = a.configVersion();
    expect(v0).toBeDefined();
    await sql`insert into task_runs (organization_id, task_id, run, agent_id, created_at) values ('org', 't', 1, 'a', 1)`.execute(a.kysely);
    expect(a.configVersion()).toBe(v0);
    await a.kysely.insertInto('agents').values(agentRow('a1')).execute();
    const v1 = a.configVersion();
    expect(v1).not.toBe(v0);
    await a.kysely.updateTable('agents').set({ status: 'INACTIVE' }).where('id', '=', 'a1').execute();
    const v2 = a.configVersion();
    expect(v2).not.toBe(v1);
    await a.kysely.deleteFrom('webhook_channels').where('agent_id', '=', 'nothing').execute();
    expect(a.configVersion()).not.toBe(v2);
  });

  it('moves when another connection (another process) commits, from the next event-loop turn', async () => {
    const [a, b] = await two();
    const v0 = a.configVersion();
    await b.kysely.insertInto('agents').values(agentRow('b1')).execute();
    // Read once per turn: within the turn that read it, the version stands.
    expect(a.configVersion()).toBe(v0);
    await nextTurn();
    expect(a.configVersion()).not.toBe(v0);
    // Nothing more committed: the version stands, turn after turn (the caches stay warm).
    const v1 = a.configVersion();
    await nextTurn();
    expect(a.configVersion()).toBe(v1);
  });

  it('serves a cached agent only until it changes, in this process or another', async () => {
    const [a, b] = await two();
    const { AgentsRepository } = await import('../../src/agents/agents.repository.js');
    const repo = new AgentsRepository(a);
    await a.kysely.insertInto('agents').values(agentRow('c1')).execute();
    const first = await repo.findShared('org', 'c1');
    expect(await repo.findShared('org', 'c1')).toBe(first);
    await b.kysely.updateTable('agents').set({ status: 'INACTIVE' }).where('id', '=', 'c1').execute();
    await nextTurn();
    expect((await repo.findShared('org', 'c1'))?.status).toBe('INACTIVE');
    await a.kysely.updateTable('agents').set({ deleted_at: 2 }).where('id', '=', 'c1').execute();
    expect(await repo.findShared('org', 'c1')).toBeUndefined();
  });
});

const agentRow = (id: string) => ({
  id, organization_id: 'org', name: id, unique_name: id, status: 'ACTIVE', current_version: 1, config: '{}', draft: null,
  created_by: null, created_at: 1, updated_at: 1, deleted_at: null,
});

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('configVersion (PostgreSQL)', () => {
  const open: Db[] = [];
  let database: { url: string; drop(): Promise<void> } | undefined;
  afterEach(async () => {
    for (const db of open.splice(0)) await db.close();
    await database?.drop();
    database = undefined;
  });
  async function two(): Promise<[Db, Db]> {
    database = await createPgDatabase();
    const a = openDatabase({ url: database.url, sqlitePath: ':memory:' });
    const b = openDatabase({ url: database.url, sqlitePath: ':memory:' });
    open.push(a, b);
    await migrate(a);
    await a.kysely.insertInto('organizations').values({ id: 'org', name: 'org', created_at: 1 }).execute();
    await Promise.all([listening(a), listening(b)]);
    return [a, b];
  }
  /** The version is unknown until the process listens for changes; asking starts listening. */
  const listening = (db: Db) => until(() => db.configVersion() !== undefined);

  it('is unknown until this process listens for changes, so caches read through meanwhile', async () => {
    database = await createPgDatabase();
    const a = openDatabase({ url: database.url, sqlitePath: ':memory:' });
    open.push(a);
    expect(a.configVersion()).toBeUndefined();
    await listening(a);
  });

  it("moves at once on this process's writes to configuration tables, not on task writes", async () => {
    const [a] = await two();
    const v0 = a.configVersion();
    await sql`insert into task_runs (organization_id, task_id, run, agent_id, created_at) values ('org', 't', 1, 'a', 1)`.execute(a.kysely);
    await sleep(50);
    expect(a.configVersion()).toBe(v0);
    await a.kysely.insertInto('agents').values(agentRow('a1')).execute();
    const v1 = a.configVersion();
    expect(v1).not.toBe(v0);
    await a.kysely.updateTable('api_keys').set({ revoked_at: 1 }).where('id', '=', 'nothing').execute();
    expect(a.configVersion()).not.toBe(v1);
  });

  it('moves when another process commits a change, once its notification arrives, and not for a rolled-back one', async () => {
    const [a, b] = await two();
    const v0 = a.configVersion();
    await b.kysely
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('agents').values(agentRow('r1')).execute();
        throw new Error('roll back');
      })
      .catch(() => {});
    await sleep(100);
    expect(a.configVersion()).toBe(v0);
    await b.kysely.insertInto('agents').values(agentRow('b1')).execute();
    await until(() => a.configVersion() !== v0);
  });

  it("never keeps a value read while this process's change was uncommitted", async () => {
    const [a] = await two();
    const { AgentsRepository } = await import('../../src/agents/agents.repository.js');
    const repo = new AgentsRepository(a);
    await a.kysely.insertInto('agents').values(agentRow('c1')).execute();
    expect((await repo.findShared('org', 'c1'))?.status).toBe('ACTIVE');
    await a.kysely.transaction().execute(async (trx) => {
      await trx.updateTable('agents').set({ status: 'INACTIVE' }).where('id', '=', 'c1').execute();
      // Another request of this process reads (and caches) the committed value while the change is in flight.
      expect((await repo.findShared('org', 'c1'))?.status).toBe('ACTIVE');
    });
    expect((await repo.findShared('org', 'c1'))?.status).toBe('INACTIVE');
  });

  it('serves a cached agent until another process changes it', async () => {
    const [a, b] = await two();
    const { AgentsRepository } = await import('../../src/agents/agents.repository.js');
    const repo = new AgentsRepository(a);
    await b.kysely.insertInto('agents').values(agentRow('d1')).execute();
    await until(async () => (await repo.findShared('org', 'd1')) !== undefined);
    const first = await repo.findShared('org', 'd1');
    expect(await repo.findShared('org', 'd1')).toBe(first);
    await b.kysely.updateTable('agents').set({ status: 'INACTIVE' }).where('id', '=', 'd1').execute();
    await until(async () => (await repo.findShared('org', 'd1'))?.status === 'INACTIVE');
  });

  it('is unknown while the listening connection is down, and trusts nothing cached before the gap', async () => {
    const [a, b] = await two();
    const v0 = a.configVersion();
    // Cut every listening connection to this database (the pools' connections are idle and reconnect on use).
    await b.kysely.executeQuery(
      sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'LISTEN%'`.compile(b.kysely),
    );
    await until(() => a.configVersion() === undefined);
    // A change made while nobody listens is never announced to a, so a must not come back with its old version.
    await b.kysely.insertInto('agents').values(agentRow('e1')).execute();
    await until(() => a.configVersion() !== undefined, 5000);
    expect(a.configVersion()).not.toBe(v0);
  });
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(10);
  }
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('VersionedCache', () => {
  it('reads through without a version, caches per version, never caches a miss', async () => {
    let version: string | undefined;
    let loads = 0;
    let value: string | undefined = 'x';
    const cache = new VersionedCache<string>(() => version);
    const get = () => cache.get('k', async () => (loads++, value));
    await get();
    await get();
    expect(loads).toBe(2);
    version = '1';
    expect(await get()).toBe('x');
    expect(await get()).toBe('x');
    expect(loads).toBe(3);
    version = '2';
    value = 'y';
    expect(await get()).toBe('y');
    expect(loads).toBe(4);
    value = undefined;
    version = '3';
    expect(await get()).toBeUndefined();
    expect(await get()).toBeUndefined();
    expect(loads).toBe(6);
  });
});
