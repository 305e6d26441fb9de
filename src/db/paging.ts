import type { SelectQueryBuilder } from 'kysely';

/**
 * Rows of one page and the total, from one filtered query: the page and the count share their `where` clauses, so a
 * list's total cannot drift from the rows it pages. `page` adds the select, order, offset and limit. The two
 * statements run together (separate connections on PostgreSQL, queued on libsql), as the lists did before.
 */
export async function pageAndTotal<DB, TB extends keyof DB, R>(
  filtered: SelectQueryBuilder<DB, TB, object>,
  page: (q: SelectQueryBuilder<DB, TB, object>) => { execute(): Promise<R[]> },
): Promise<{ rows: R[]; total: number }> {
  const [rows, counted] = await Promise.all([page(filtered).execute(), filtered.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst()]);
  return { rows, total: Number((counted as { n?: number | string } | undefined)?.n ?? 0) };
}
