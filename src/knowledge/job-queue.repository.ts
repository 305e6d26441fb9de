import { sql, type Kysely, type RawBuilder } from 'kysely';
import { batches, VALUES_PER_IN_LIST } from '../db/batches.js';
import { pgIds } from '../db/id-lists.js';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { newId } from '../lib/ids.js';

export type JobRow = Database['jobs'];

/** A claimed job as one worker holds it: every write names this fence and is refused once the job moved on. */
export interface JobLease {
  id: string;
  organizationId: string;
  fence: number;
}

/**
 * The `jobs` queue: the same claim pattern as the tasks queue (src/tasks/task-queue.repository.ts), on its own
 * table. A claim takes the oldest due job, or one whose worker stopped heart-beating while it has attempts left,
 * bumping `fence` and `attempts`. PostgreSQL claims with `FOR UPDATE SKIP LOCKED`; SQLite with one atomic
 * `UPDATE ... WHERE id IN (SELECT ... LIMIT 1) RETURNING` (SQLite has one writer).
 */
export class JobQueueRepository {
  constructor(private readonly db: Db) {}

  /** Enqueues inside the caller's transaction, so a job exists exactly when the object it works on does. */
  async enqueue(k: Kysely<Database>, job: { organizationId: string; kind: string; refId: string; maxAttempts: number }, now: number): Promise<string> {
    const id = newId();
    await k
      .insertInto('jobs')
      .values({
        id,
        organization_id: job.organizationId,
        kind: job.kind,
        ref_id: job.refId,
        status: 'queued',
        attempts: 0,
        max_attempts: job.maxAttempts,
        fence: 0,
        lease_owner: null,
        lease_expires_at: null,
        heartbeat_at: null,
        run_after: now,
        last_error: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  }

  /**
   * Whether any job could be claimed now. A read, so idle workers poll without taking SQLite's write lock (a claim
   * is an UPDATE, which does even when it matches nothing) away from the tasks queue.
   */
  async hasClaimable(kind: string, now: number): Promise<boolean> {
    const r = await this.db.kysely
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', kind)
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'queued'), eb('run_after', '<=', now)]),
          eb.and([eb('status', '=', 'running'), eb('lease_expires_at', '<', now), eb('attempts', '<', eb.ref('max_attempts'))]),
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    return r !== undefined;
  }

  claimDue(kind: string, owner: string, now: number, leaseMs: number): Promise<JobRow | undefined> {
    return this.claim(sql`kind = ${kind} and status = 'queued' and run_after <= ${now}`, sql`run_after`, owner, now, leaseMs);
  }

  /** A job whose worker died (lease ran out) with attempts left. */
  claimExpired(kind: string, owner: string, now: number, leaseMs: number): Promise<JobRow | undefined> {
    return this.claim(
      sql`kind = ${kind} and status = 'running' and lease_expires_at < ${now} and attempts < max_attempts`,
      sql`lease_expires_at`,
      owner,
      now,
      leaseMs,
    );
  }

  private async claim(candidate: RawBuilder<unknown>, order: RawBuilder<unknown>, owner: string, now: number, leaseMs: number): Promise<JobRow | undefined> {
    const set = sql`status = 'running', lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}, heartbeat_at = ${now},
      fence = fence + 1, attempts = attempts + 1, updated_at = ${now}`;
    const k = this.db.kysely;
    if (this.db.dialect === 'postgres') {
      const r = await sql<JobRow>`
        with c as (select id from jobs where ${candidate} order by ${order} limit 1 for update skip locked)
        update jobs j set ${set} from c where j.id = c.id returning j.*`.execute(k);
      return r.rows[0] && normalize(r.rows[0]);
    }
    const r = await sql<JobRow>`
      update jobs set ${set} where id in (select id from jobs where ${candidate} order by ${order} limit 1) returning *`.execute(k);
    return r.rows[0] && normalize(r.rows[0]);
  }

  /**
   * Jobs whose workers died as often as their attempts allow: ended `error` here (fenced, so a late worker cannot
   * revive them). The caller records the failure on the object the job worked on.
   */
  async sweepExhausted(kind: string, now: number, reason: (attempts: number) => string): Promise<JobRow[]> {
    const rows = await this.db.kysely
      .selectFrom('jobs')
      .select(['id', 'fence', 'attempts'])
      .where('kind', '=', kind)
      .where('status', '=', 'running')
      .where('lease_expires_at', '<', now)
      .whereRef('attempts', '>=', 'max_attempts')
      .limit(100)
      .execute();
    const ended: JobRow[] = [];
    for (const r of rows) {
      const row = await this.db.kysely
        .updateTable('jobs')
        .set((eb) => ({ status: 'error', last_error: reason(r.attempts), fence: eb('fence', '+', 1), lease_owner: null, lease_expires_at: null, updated_at: now }))
        .where('id', '=', r.id)
        .where('fence', '=', r.fence)
        .returningAll()
        .executeTakeFirst();
      if (row) ended.push(normalize(row));
    }
    return ended;
  }

  /** Extends the lease; false when the job is no longer this worker's (deleted, reclaimed). */
  async heartbeat(l: JobLease, now: number, leaseMs: number): Promise<boolean> {
    const r = await this.db.kysely
      .updateTable('jobs')
      .set({ lease_expires_at: now + leaseMs, heartbeat_at: now })
      .where('id', '=', l.id)
      .where('fence', '=', l.fence)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Ends the job `done` or `error` and runs the caller's writes in the same transaction, only while the lease holds.
   * Returns false (nothing written) when this worker's attempt is stale.
   */
  async finish(l: JobLease, outcome: { status: 'done' | 'error'; error?: string }, now: number, work: (k: Kysely<Database>) => Promise<void>): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('jobs')
        .set({ status: outcome.status, last_error: outcome.error ?? null, lease_owner: null, lease_expires_at: null, updated_at: now })
        .where('id', '=', l.id)
        .where('fence', '=', l.fence)
        .where('status', '=', 'running')
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await work(trx);
      return true;
    });
  }

  /** Puts a job back for a later attempt (a transient failure), keeping the attempt it used. */
  async retryLater(l: JobLease, at: number, error: string, now: number): Promise<boolean> {
    const r = await this.db.kysely
      .updateTable('jobs')
      .set({ status: 'queued', run_after: at, last_error: error, lease_owner: null, lease_expires_at: null, updated_at: now })
      .where('id', '=', l.id)
      .where('fence', '=', l.fence)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Hands a job back untouched (worker shutting down): its attempt is refunded. */
  async release(l: JobLease, now: number): Promise<boolean> {
    const r = await this.db.kysely
      .updateTable('jobs')
      .set((eb) => ({ status: 'queued', attempts: eb('attempts', '-', 1), lease_owner: null, lease_expires_at: null, updated_at: now }))
      .where('id', '=', l.id)
      .where('fence', '=', l.fence)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** PostgreSQL: one statement; SQLite: in slices (db/batches.ts), a knowledge base's documents may be more than one statement can bind. */
  async deleteForRefs(k: Kysely<Database>, org: string, refIds: readonly string[]): Promise<void> {
    if (this.db.dialect === 'postgres') {
      // Both columns of jobs_ref_idx: whichever the planner uses, one statement reads the organization's jobs at most
      // once (db/id-lists.ts).
      await k.deleteFrom('jobs').where('organization_id', '=', org).where('ref_id', '=', sql<string>`any(${pgIds(refIds)})`).execute();
      return;
    }
    for (const batch of batches(refIds, VALUES_PER_IN_LIST)) await k.deleteFrom('jobs').where('organization_id', '=', org).where('ref_id', 'in', batch).execute();
  }

  /** The newest job of an object (for showing attempts). */
  async latestFor(org: string, refId: string): Promise<JobRow | undefined> {
    const r = await this.db.kysely
      .selectFrom('jobs')
      .selectAll()
      .where('organization_id', '=', org)
      .where('ref_id', '=', refId)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return r && normalize(r);
  }
}

/** bigint columns arrive as numbers from pg (type parser) but `fence` math must stay numeric on both. */
function normalize(r: JobRow): JobRow {
  return { ...r, fence: Number(r.fence), attempts: Number(r.attempts), max_attempts: Number(r.max_attempts) };
}
