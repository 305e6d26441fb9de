import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { CompiledOnce, slot } from '../db/compiled-once.js';
import { pgTextArray } from '../db/pg-arrays.js';
import type { TaskRow } from './tasks.repository.js';

/**
 * The claim statements of the queue (task-queue.repository.ts): one claim of up to `limit` rows, and the worker's
 * hot pending claim and its read-only probe, compiled once (db/compiled-once.ts).
 *
 * The pending statements come in two shapes. `plain`: every organization's tasks, the statement the worker runs
 * whenever no organization is held back (SlotLedger.heldBack), i.e. nearly always. `excluding`: the same statement
 * that also skips the new tasks of the organizations held back, a list given as one parameter (PostgreSQL
 * `<> all($n::text[])`, SQLite `not in (select value from json_each(?))`), so one text serves every list. Child tasks
 * (`parent_execution` set) are never skipped: their parent is a run already admitted, which waits for them.
 */
export type PendingShape = 'plain' | 'excluding';

/** The claim of up to `limit` rows matching `candidate`, oldest by `order` first (each argument a value or a Slot). */
export function claimStatement(db: Db, candidate: RawBuilder<unknown>, order: RawBuilder<unknown>, owner: unknown, leaseExpires: unknown, now: unknown, limit: unknown) {
  const set = sql`status = 'executing', lease_owner = ${owner}, lease_expires_at = ${leaseExpires}, heartbeat_at = ${now},
      fence = fence + 1, execution_attempts = execution_attempts + 1, hitl_request = null, hitl_decision = null,
      started_at = coalesce(started_at, ${now}), updated_at = ${now}`;
  if (db.dialect === 'postgres') {
    return sql<TaskRow>`
        with c as (select organization_id, id from tasks where ${candidate} order by ${order} limit ${limit} for update skip locked)
        update tasks t set ${set} from c where t.organization_id = c.organization_id and t.id = c.id returning t.*`;
  }
  return sql<TaskRow>`
      update tasks set ${set}
      where (organization_id, id) in (select organization_id, id from tasks where ${candidate} order by ${order} limit ${limit})
      returning *`;
}

export class PendingClaims {
  constructor(private readonly db: Db) {}

  /** Whether a pending task is due (SQLite's probe before it takes the write lock; see nextClaimable). */
  probe(now: number, heldBack: readonly string[]): CompiledQuery {
    return this.probes.query(shapeOf(heldBack), (s) => (s.name === 'now' ? now : this.list(heldBack)));
  }

  /** Claims up to `limit` due pending tasks, lowest fair rank first, none of `heldBack`'s but their child tasks. */
  claim(owner: string, now: number, leaseMs: number, limit: number, heldBack: readonly string[]): CompiledQuery {
    return this.claims.query(shapeOf(heldBack), (s) => (s.name === 'heldBack' ? this.list(heldBack) : claimValue(s.name, owner, now, leaseMs, limit)));
  }

  // `status = 'pending'` is a literal in both: the queue index is partial on it (migration 0030), which PostgreSQL's
  // generic plans cannot choose for a parameter. The claim walks `tasks_fair_idx (fair_rank, queued_at)` in order,
  // its back-off check read from the index; the exclusion is checked on the rows that walk reaches.
  private candidate(shape: PendingShape): RawBuilder<unknown> {
    const due = sql`status = 'pending' and queued_at <= ${slot('now')}`;
    return shape === 'plain' ? due : sql`${due} and ${this.exclusion()}`;
  }

  /** Not a new task of the held-back organizations (the `heldBack` slot): a child task is never held back. */
  private exclusion(): RawBuilder<boolean> {
    const list = slot('heldBack');
    const others = this.db.dialect === 'postgres' ? sql`organization_id <> all(${list}::text[])` : sql`organization_id not in (select value from json_each(${list}))`;
    return sql<boolean>`(${others} or parent_execution is not null)`;
  }

  private readonly probes = new CompiledOnce((shape: PendingShape) => {
    const q = this.db.kysely.selectFrom('tasks').select('id').where(sql<boolean>`status = 'pending'`).where('queued_at', '<=', slot('now') as never);
    return (shape === 'plain' ? q : q.where(this.exclusion())).limit(1);
  });

  private readonly claims = new CompiledOnce((shape: PendingShape) => ({
    compile: () => claimStatement(this.db, this.candidate(shape), sql`fair_rank, queued_at`, slot('owner'), slot('leaseExpires'), slot('now'), slot('limit')).compile(this.db.kysely),
  }));

  /** The held-back organizations as the statement's one parameter. */
  private list(heldBack: readonly string[]): unknown {
    return this.db.dialect === 'postgres' ? pgTextArray(heldBack) : JSON.stringify(heldBack);
  }
}

function shapeOf(heldBack: readonly string[]): PendingShape {
  return heldBack.length ? 'excluding' : 'plain';
}

/** The value of each slot of the compiled pending claim. */
function claimValue(name: string, owner: string, now: number, leaseMs: number, limit: number): unknown {
  switch (name) {
    case 'owner':
      return owner;
    case 'leaseExpires':
      return now + leaseMs;
    case 'now':
      return now;
    case 'limit':
      return limit;
  }
  throw new Error(`claim: no value for ${name}`);
}
