import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { pgBigintArray, pgFloat4Array, pgFloat8Array, pgIntArray, pgTextArray } from '../../src/db/pg-arrays.js';
import { openMigratedDb } from '../support/migrated-db.js';

/**
 * Batch statements send their column arrays in PostgreSQL's binary format (pg-arrays.ts) instead of pg's text
 * literals. What PostgreSQL receives must be what the text form gave it, element for element, including the
 * awkward ones: quotes and backslashes (what the text form escapes), JSON, non-BMP characters, empty strings, NULLs.
 */
describe('binary array parameters (PostgreSQL)', () => {
  let opened: Awaited<ReturnType<typeof openMigratedDb>>;
  let db: Db;
  beforeAll(async () => {
    opened = await openMigratedDb('postgres');
    db = opened.db;
  });
  afterAll(async () => opened?.close());

  const texts = async (param: unknown) =>
    (await sql<{ v: string | null; o: string }>`select v, o from unnest(${param}::text[]) with ordinality as x(v, o) order by o`.execute(db.kysely)).rows.map((r) => r.v);

  it('gives PostgreSQL the same texts as the text form, in order', async () => {
    const values = ['plain', '', null, 'quote " and \\ backslash', '{"a":"b\\"c","d":[1,null]}', 'é 😀 \u2028 ∑', 'x'.repeat(70_000), '{', 'NULL', ' '];
    expect(await texts(pgTextArray(values))).toEqual(values);
    expect(await texts(values)).toEqual(values);
  });

  it('sends an empty array, and other values as their strings', async () => {
    expect(await texts(pgTextArray([]))).toEqual([]);
    expect(await texts(pgTextArray([1, undefined, true]))).toEqual(['1', null, 'true']);
  });

  it('stores a lone surrogate as U+FFFD, as a text parameter does, and leaves NUL to be refused', async () => {
    expect(await texts(pgTextArray(['a\ud800b', '\udfff']))).toEqual(['a\uFFFDb', '\uFFFD']);
    expect(await texts(['a\ud800b'])).toEqual(['a\uFFFDb']);
    await expect(texts(pgTextArray(['a\u0000b']))).rejects.toThrow(/0x00/);
  });

  it('sends bigint and int arrays, with NULLs, numbers and decimal strings', async () => {
    const big = (await sql<{ v: string | null }>`select v::text as v from unnest(${pgBigintArray([0, -1, 1795898744558, '9007199254740993', null, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, -(2 ** 32), 2 ** 32 - 1])}::bigint[]) with ordinality as x(v, o) order by o`.execute(db.kysely)).rows;
    expect(big.map((r) => r.v)).toEqual(['0', '-1', '1795898744558', '9007199254740993', null, '9007199254740991', '-9007199254740991', '-4294967296', '4294967295']);
    // What is not an integer is refused, as BigInt refuses it.
    expect(() => pgBigintArray([1.5])).toThrow(RangeError);
    expect(() => pgBigintArray(['1.5'])).toThrow(SyntaxError);
    const ints = (await sql<{ v: number | null }>`select v from unnest(${pgIntArray([3, null, -7, 2147483647])}::int[]) with ordinality as x(v, o) order by o`.execute(db.kysely)).rows;
    expect(ints.map((r) => r.v)).toEqual([3, null, -7, 2147483647]);
  });

  it('sends float4 arrays as their nearest float4 (Math.fround) and float8 arrays exactly', async () => {
    const values = [0.1, -1.5, 1e-30, 3.4e38, 0, 1 / 3, 0.06792002227681988, 123456789.123];
    const read = async (param: unknown, type: 'real' | 'float8') =>
      (await sql<{ v: number }>`select v::float8 as v from unnest(${param}::${sql.raw(type)}[]) with ordinality as x(v, o) order by o`.execute(db.kysely)).rows.map((r) => r.v);
    expect(await read(pgFloat4Array(values), 'real')).toEqual(values.map(Math.fround));
    expect(await read(pgFloat8Array(values), 'float8')).toEqual(values);
    // What the text form of the same numbers gives PostgreSQL.
    expect(await read(pgFloat4Array(values), 'real')).toEqual(await read(`{${values.join(',')}}`, 'real'));
    expect(await read(pgFloat4Array([]), 'real')).toEqual([]);
  });

  it('is refused when its element type is not the cast, not converted', async () => {
    await expect(sql`select ${pgTextArray(['1'])}::int[]`.execute(db.kysely)).rejects.toThrow(/element type/);
    await expect(sql`select ${pgIntArray([1])}::bigint[]`.execute(db.kysely)).rejects.toThrow(/element type/);
    await expect(sql`select ${pgFloat4Array([1])}::float8[]`.execute(db.kysely)).rejects.toThrow(/element type/);
  });
});
