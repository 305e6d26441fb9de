import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompiledInsert, CompiledOnce, slot } from '../../src/db/compiled-once.js';
import type { Db } from '../../src/db/database.js';
import { TEST_DBS } from '../support/databases.js';
import { openMigratedDb } from '../support/migrated-db.js';

/**
 * Hot statements compiled once (src/db/compiled-once.ts): the SQL and parameters must be exactly what Kysely builds
 * for the same values, the statements must run, and rows of another shape must be refused (the caller then builds
 * the statement as before).
 */
describe.each(TEST_DBS)('compiled once (%s)', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigratedDb(kind));
  });
  afterAll(() => close());

  const run = (i: number) => ({ organization_id: 'org', task_id: `t${i}`, run: i, agent_id: 'a', created_at: 1000 + i });

  it('builds the very statement Kysely builds, for each row count, and runs it', async () => {
    const insert = new CompiledInsert((rows) => db.kysely.insertInto('task_runs').values(rows as never));
    let next = 10;
    for (const n of [1, 3, 1, 2]) {
      const rows = Array.from({ length: n }, () => run(next++));
      const q = insert.query(rows)!;
      const built = db.kysely.insertInto('task_runs').values(rows).compile();
      expect(q.sql).toBe(built.sql);
      expect(q.parameters).toEqual(built.parameters);
      await db.kysely.executeQuery(q);
    }
    const stored = await db.kysely.selectFrom('task_runs').select(['task_id', 'run', 'created_at']).orderBy('task_id').execute();
    expect(stored.map((r) => [r.task_id, Number(r.run), Number(r.created_at)])).toEqual(
      [10, 11, 12, 13, 14, 15, 16].map((i) => [`t${i}`, i, 1000 + i]),
    );
  });

  it('refuses rows of another shape: a missing or extra column, an undefined value', () => {
    const insert = new CompiledInsert((rows) => db.kysely.insertInto('task_runs').values(rows as never));
    const { agent_id: _gone, ...missing } = run(1);
    expect(insert.query([run(1), missing])).toBeUndefined();
    expect(insert.query([run(1), { ...run(2), extra: 1 }])).toBeUndefined();
    expect(insert.query([run(1), { ...run(2), agent_id: undefined }])).toBeUndefined();
    expect(insert.query([])).toBeUndefined();
    // Another column order is another statement, not a wrong one.
    const { organization_id, ...rest } = run(3);
    const reordered = insert.query([{ ...rest, organization_id }])!;
    expect(reordered.sql).toBe(db.kysely.insertInto('task_runs').values({ ...rest, organization_id }).compile().sql);
  });

  it('fills slots by name and keeps constants, in several lists of one statement', () => {
    const update = new CompiledOnce((_: 0) =>
      db.kysely
        .updateTable('task_runs')
        .set({ agent_id: slot('agent') as never, created_at: 5 })
        .where('task_id', '=', slot('task') as never)
        .where('run', '=', slot('run') as never),
    );
    const q = update.query(0, (s) => ({ agent: 'b', task: 't1', run: 1 })[s.name]);
    const built = db.kysely.updateTable('task_runs').set({ agent_id: 'b', created_at: 5 }).where('task_id', '=', 't1').where('run', '=', 1).compile();
    expect(q.sql).toBe(built.sql);
    expect(q.parameters).toEqual(built.parameters);

    const two = new CompiledInsert((a, b) => db.kysely.with('x', (k) => k.insertInto('task_runs').values(a as never)).insertInto('task_runs').values(b as never));
    const a = [run(40), run(41)];
    const b = [run(42)];
    const q2 = two.query(a, b)!;
    const built2 = db.kysely.with('x', (k) => k.insertInto('task_runs').values(a)).insertInto('task_runs').values(b).compile();
    expect(q2.sql).toBe(built2.sql);
    expect(q2.parameters).toEqual(built2.parameters);
  });
});
