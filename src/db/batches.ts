/**
 * Statements built from caller-sized lists (files of one request, a run's trace events, ids named in a config) are
 * split: one bound variable per value made 5,000 files in one call fail with "too many SQL variables" (issue 20;
 * SQLite allows 32,766, PostgreSQL 65,535). These sizes keep any table here (at most ~20 columns) far below both.
 */
export const ROWS_PER_INSERT = 500;
export const VALUES_PER_IN_LIST = 1000;

/** `items` in consecutive slices of at most `size`. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
