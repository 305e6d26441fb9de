import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'libsql';
import { afterAll, describe, expect, it } from 'vitest';
import { withStatementCache } from '../../src/db/sqlite-handle.js';

/**
 * libsql rows are read as arrays and made objects in JavaScript (src/db/sqlite-rows.ts), on the service's connection:
 * every reader must get exactly the objects libsql's own object mode gives.
 */
describe('libsql rows built from arrays', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentry-rows-'));
  const path = join(dir, 'rows.db');
  const raw = new Database(path);
  raw.exec('PRAGMA journal_mode=WAL');
  raw.exec(`create table t (id integer primary key, name text, "odd ""key"" \\ ${'`'}x${'`'}" text, big integer, data blob, f real)`);
  raw.exec(`insert into t values (1, 'a', 'q', 9007199254740993, x'00ff10', 1.5), (2, null, null, -3, null, null)`);
  const handle = withStatementCache(raw);
  const plain = new Database(path);
  afterAll(() => {
    plain.close();
    handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const statements = [
    'select * from t order by id',
    // A repeated name keeps its last value; expressions have no declared type.
    'select id, name as id, length(data) as n, data || x\'01\' as joined from t order by 1',
    'update t set f = f where id = 1 returning *',
  ];

  it('gives the objects of libsql object mode: keys, order, repeated names, numbers, nulls, blobs as ArrayBuffers', () => {
    for (const text of statements) {
      const ours = handle.prepare(text).all([]) as Record<string, unknown>[];
      const theirs = plain.prepare(text).all() as Record<string, unknown>[];
      expect(ours).toEqual(theirs);
      expect(ours.map((r) => Object.keys(r))).toEqual(theirs.map((r) => Object.keys(r)));
      for (const [i, r] of ours.entries()) for (const k of Object.keys(r)) expect(r[k]?.constructor).toBe(theirs[i]![k]?.constructor);
    }
    const [first] = handle.prepare('select data from t where id = 1').all([]) as { data: ArrayBuffer }[];
    expect(first!.data).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(first!.data)]).toEqual([0, 255, 16]);
  });

  it('keeps a column named __proto__ an own key, not the row\'s prototype', () => {
    const [row] = handle.prepare(`select 1 as "__proto__", 2 as b`).all([]) as Record<string, unknown>[];
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe(1);
    expect(row!.b).toBe(2);
  });

  it('streams the same objects (iterate) and leaves writes as they were', () => {
    const it = handle.prepare('select * from t order by id').iterate([]) as Iterable<unknown>;
    expect([...it]).toEqual(plain.prepare('select * from t order by id').all());
    const info = handle.prepare('update t set name = name where id = 2').run([]) as { changes: number };
    expect(info.changes).toBe(1);
  });

  it('follows a cached statement whose table gained a column', () => {
    const text = 'select * from t where id = 2';
    expect(Object.keys((handle.prepare(text).all([]) as object[])[0]!)).not.toContain('added');
    raw.exec("alter table t add column added text default 'new'");
    const [row] = handle.prepare(text).all([]) as Record<string, unknown>[];
    expect(row).toEqual(plain.prepare(text).all()[0]);
    expect(row!.added).toBe('new');
  });
});
