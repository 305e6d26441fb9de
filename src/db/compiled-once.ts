import { CompiledQuery, type Compilable } from 'kysely';

/**
 * A hot statement built and compiled by Kysely once per shape, then only given new values.
 *
 * Kysely builds, freezes and walks an operation tree and prints its SQL on every execution: for the task engine's
 * multi-row inserts and fenced updates that was ~10% of a synchronous run's CPU (docs/benchmarks.md, "The
 * synchronous round trip"). Here the query is built once per `shape` (a row count, a flag) with a `Slot` in place
 * of every value that changes; the compiled text is kept with where each slot's value goes, so a later execution
 * is an array of parameters and the very SQL Kysely would have printed (the same text keeps libsql's statement cache
 * and PostgreSQL's named statements, pg-pool.ts, hitting). A value that is not a slot (a constant such as `null`)
 * is compiled in as the constant it was.
 *
 *   const finishUpdate = new CompiledOnce((_: 0) => k.updateTable('tasks').set({ status: slot('status') })...);
 *   await trx.executeQuery(finishUpdate.query(0, (s) => values[s.name]));
 *
 * The builder runs against whatever Kysely instance it closes over: the text is the same on a transaction.
 */
export class Slot {
  constructor(
    readonly name: string,
    /** For multi-row statements: the row the value comes from. */
    readonly row = 0,
    /** For statements that insert several lists of rows: the list. */
    readonly list = 0,
  ) {}
}

/** A placeholder for the value named `name` (of row `row`). */
export function slot(name: string, row = 0): Slot {
  return new Slot(name, row);
}

interface Compiled {
  sql: string;
  /** Per parameter: the slot it is filled from, or the constant it was compiled with. */
  params: ({ slot: Slot } | { constant: unknown })[];
}

export class CompiledOnce<S> {
  private readonly compiled = new Map<S, Compiled>();

  constructor(
    private readonly build: (shape: S) => Compilable<unknown>,
    /** Shapes kept at most (a row count is bounded by its callers' batch sizes). */
    private readonly max = 64,
  ) {}

  /** The statement of `shape` with each slot's value read by `value`. */
  query(shape: S, value: (s: Slot) => unknown): CompiledQuery {
    let c = this.compiled.get(shape);
    if (!c) {
      const q = this.build(shape).compile();
      c = { sql: q.sql, params: q.parameters.map((p) => (p instanceof Slot ? { slot: p } : { constant: p })) };
      if (this.compiled.size < this.max) this.compiled.set(shape, c);
    }
    const params = new Array<unknown>(c.params.length);
    for (let i = 0; i < params.length; i++) {
      const p = c.params[i]!;
      params[i] = 'slot' in p ? value(p.slot) : p.constant;
    }
    return CompiledQuery.raw(c.sql, params);
  }
}

/**
 * Multi-row INSERTs (one list of rows, or several inserted by one statement) compiled once per row counts and
 * column lists (each list's first row's keys, in its order). Lists whose rows do not all have exactly those keys,
 * or that hold an undefined value (Kysely leaves such a column to its default, which a fixed text cannot), get no
 * compiled statement: `query` returns undefined and the caller builds the statement as before.
 */
export class CompiledInsert {
  private readonly once: CompiledOnce<string>;
  /** The lists being compiled (`query` is synchronous, so the builder reads the ones it was called for). */
  private building: { n: number; columns: string[] }[] = [];

  constructor(build: (...lists: Record<string, Slot>[][]) => Compilable<unknown>) {
    this.once = new CompiledOnce<string>(() =>
      build(...this.building.map(({ n, columns }, list) => Array.from({ length: n }, (_, row) => Object.fromEntries(columns.map((c) => [c, new Slot(c, row, list)]))))),
    );
  }

  query(...lists: (readonly object[])[]): CompiledQuery | undefined {
    const shapes: { n: number; columns: string[] }[] = [];
    let shape = '';
    for (const rows of lists) {
      const columns = sameColumns(rows);
      if (!columns) return undefined;
      shapes.push({ n: rows.length, columns });
      shape += `${rows.length}|${columns.join(',')};`;
    }
    this.building = shapes;
    return this.once.query(shape, (s) => (lists[s.list]![s.row] as Record<string, unknown>)[s.name]);
  }
}

/** The first row's keys when every row has exactly those, none undefined. */
function sameColumns(rows: readonly object[]): string[] | undefined {
  if (!rows.length) return undefined;
  const first = rows[0] as Record<string, unknown>;
  const columns = Object.keys(first);
  for (const r of rows as readonly Record<string, unknown>[]) {
    let n = 0;
    for (const k in r) {
      if (r[k] === undefined || !(k in first)) return undefined;
      n++;
    }
    if (n !== columns.length) return undefined;
  }
  return columns;
}
