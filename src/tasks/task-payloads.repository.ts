import type { Compilable, Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { DialectName } from '../db/database.js';
import type { Database } from '../db/schema.js';

/**
 * A large submission's texts live in `task_payloads`, not in the `tasks` row (docs/decisions.md, "Performance:
 * databases"). On libsql every write of a row rewrites the whole record and reaching a column stored after a long
 * text walks its overflow pages: with an 8 MB input each claim, heartbeat and outcome of the task held the event
 * loop for 10-100 ms. With the texts aside, the row the queue reads and writes stays small, and the texts are read
 * only where a task is shown or run. PostgreSQL keeps large values out of line itself (TOAST), and an update that
 * leaves them alone does not copy them: its rows keep their texts (payload_stored 0).
 */

/** The submission's texts that go aside together. */
export const PAYLOAD_COLUMNS = ['input_text', 'additional_context', 'expected_output', 'instructions_override', 'output_schema'] as const;

/** Above this many characters in all, a task's texts go aside; a row this small costs a write of a few pages. */
export const PAYLOAD_INLINE_MAX = 16_384;

// The row type spelled here, not imported: tasks.repository.ts imports this module.
type TaskRow = Selectable<Database['tasks']>;
type PayloadRow = Insertable<Database['task_payloads']>;
type PayloadFields = Pick<TaskRow, (typeof PAYLOAD_COLUMNS)[number]>;
type Reader = Kysely<Database> | Transaction<Database>;

/** What stands in the row for texts kept aside. */
const ASIDE = { input_text: '', additional_context: null, expected_output: null, instructions_override: null, output_schema: null, payload_stored: 1 } as const;

function isLarge(f: PayloadFields): boolean {
  // Short-circuits on the input, the usual large one; a plain loop: this runs for every task accepted.
  let n = f.input_text.length;
  if (n > PAYLOAD_INLINE_MAX) return true;
  n += (f.additional_context?.length ?? 0) + (f.expected_output?.length ?? 0) + (f.instructions_override?.length ?? 0) + (f.output_schema?.length ?? 0);
  return n > PAYLOAD_INLINE_MAX;
}

function payloadOf(orgId: string, taskId: string, f: PayloadFields): PayloadRow {
  return {
    organization_id: orgId,
    task_id: taskId,
    input_text: f.input_text,
    additional_context: f.additional_context,
    expected_output: f.expected_output,
    instructions_override: f.instructions_override,
    output_schema: f.output_schema,
  };
}

/**
 * New rows as they are written: a large one's texts replaced by ASIDE, and its payload row to insert with it. Rows
 * that stay whole are returned as they are (the accept path pays one length check a task).
 */
export function setAside<R extends TaskRow | (PayloadFields & { organization_id: string; id: string })>(
  dialect: DialectName,
  rows: R[],
): { rows: R[]; payloads: PayloadRow[] } {
  if (dialect === 'postgres' || !rows.some(isLarge)) return { rows, payloads: [] };
  const payloads: PayloadRow[] = [];
  const out = rows.map((r) => {
    if (!isLarge(r)) return r;
    payloads.push(payloadOf(r.organization_id, r.id, r));
    return { ...r, ...ASIDE };
  });
  return { rows: out, payloads };
}

export async function insertPayloads(trx: Reader, payloads: PayloadRow[]): Promise<void> {
  // One at a time: each may be megabytes, and they are rare.
  for (const p of payloads) await trx.insertInto('task_payloads').values(p).execute();
}

/**
 * A continuation's new texts (task.repository continueRun): the columns to set on the row (the texts, or ASIDE),
 * after the payload row was replaced or removed.
 */
export async function replacePayload<F extends PayloadFields>(trx: Transaction<Database>, dialect: DialectName, orgId: string, taskId: string, f: F): Promise<F & { payload_stored: number }> {
  if (dialect === 'postgres') return { ...f, payload_stored: 0 };
  await trx.deleteFrom('task_payloads').where('organization_id', '=', orgId).where('task_id', '=', taskId).execute();
  if (!isLarge(f)) return { ...f, payload_stored: 0 };
  await trx.insertInto('task_payloads').values(payloadOf(orgId, taskId, f)).execute();
  return { ...f, ...ASIDE };
}

/** Runs a select: by default on `k`; a list passes its reader (libsql: off the event loop, db/list-reads.ts). */
type Select = <T>(query: Compilable<T>) => Promise<T[]>;

/**
 * The rows with their texts put back from `task_payloads` where they were kept aside; read only for those. `select`
 * runs the read: a page of a list reads its texts where it read its rows, not on the event loop.
 */
export async function withPayloads<R extends TaskRow>(k: Reader, rows: R[], select: Select = (q) => k.executeQuery(q.compile()).then((r) => r.rows)): Promise<R[]> {
  const aside = rows.filter((r) => r.payload_stored === 1);
  if (aside.length === 0) return rows;
  const byOrg = new Map<string, string[]>();
  for (const r of aside) byOrg.set(r.organization_id, [...(byOrg.get(r.organization_id) ?? []), r.id]);
  const found = new Map<string, PayloadRow>();
  for (const [orgId, ids] of byOrg) {
    const ps = await select(k.selectFrom('task_payloads').selectAll().where('organization_id', '=', orgId).where('task_id', 'in', ids));
    for (const p of ps) found.set(`${orgId}\u0000${p.task_id}`, p);
  }
  return rows.map((r) => {
    const p = r.payload_stored === 1 ? found.get(`${r.organization_id}\u0000${r.id}`) : undefined;
    return p ? { ...r, ...textsOf({ additional_context: null, expected_output: null, instructions_override: null, output_schema: null, ...p }) } : r;
  });
}

/** The texts of a row that has them (read with them, or as submitted), to put on the same row as an update returns it. */
export function textsOf(r: PayloadFields): PayloadFields {
  return { input_text: r.input_text, additional_context: r.additional_context, expected_output: r.expected_output, instructions_override: r.instructions_override, output_schema: r.output_schema };
}

/** withPayloads of one row (or none). */
export async function withPayload<R extends TaskRow>(k: Reader, row: R | undefined): Promise<R | undefined> {
  return row && row.payload_stored === 1 ? (await withPayloads(k, [row]))[0] : row;
}
