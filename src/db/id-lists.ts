import { sql, type RawBuilder } from 'kysely';
import { pgTextArray } from './pg-arrays.js';

/**
 * A list of ids as one PostgreSQL `text[]` parameter, for `= any(...)`: one bound variable however long the list, so
 * a statement needs no slicing (SQLite, which has no arrays, still takes `in (...)` slices of VALUES_PER_IN_LIST).
 *
 * Such a statement's plan must not depend on column statistics. A table filled by one bulk insert has none until
 * autovacuum's ANALYZE, and PostgreSQL then guesses 0.5% of the rows for each `column = value`: 70,000 documents of
 * one organization and base look like 2 rows under (organization_id, kb_id), cheaper to read than any id lookup.
 * Read through that index, every row of the base is compared with the id list, and in a generic plan (a named
 * statement from its sixth execution, src/db/pg-pool.ts) the list is not hashed: checking and deleting 70,000
 * documents 1,000 ids a statement took 153 s. Hence lookups by the rows' own key, with the organization's filters
 * outside them (see the repositories), and one statement per list rather than one per slice.
 */
export function pgIds(ids: readonly string[]): RawBuilder<string[]> {
  return sql<string[]>`${pgTextArray(ids)}::text[]`;
}
