import type { Db } from '../db/database.js';

export interface LeaseRequest {
  /** Tokens wanted. */
  want: number;
  perSecond: number;
  burst: number;
  now: number;
}

export interface LeaseResult {
  granted: number;
  /** Tokens left in the shared bucket after the grant (fractional while it refills). */
  left: number;
}

/**
 * The shared token buckets of the rate limits: one row per (organization, bucket), refilled lazily from `updated_at`.
 * A lease takes up to `want` whole tokens in one transaction (serialised per row: FOR UPDATE on PostgreSQL, the write
 * lock SQLite takes with the first statement), so processes sharing the database never grant the same token twice.
 */
export class RateBucketsRepository {
  constructor(private readonly db: Db) {}

  async lease(organizationId: string, bucket: string, r: LeaseRequest): Promise<LeaseResult> {
    return this.db.kysely.transaction().execute(async (trx) => {
      // Insert first: a write, so SQLite takes its lock before reading (no lock upgrade between two processes).
      await trx
        .insertInto('rate_buckets')
        .values({ organization_id: organizationId, bucket, tokens: r.burst, updated_at: r.now })
        .onConflict((oc) => oc.columns(['organization_id', 'bucket']).doNothing())
        .execute();
      let q = trx.selectFrom('rate_buckets').select(['tokens', 'updated_at']).where('organization_id', '=', organizationId).where('bucket', '=', bucket);
      if (this.db.dialect === 'postgres') q = q.forUpdate();
      const row = await q.executeTakeFirstOrThrow();
      const stored = Number(row.updated_at);
      // Clocks of several processes differ a little: time never runs backwards for the bucket.
      const elapsed = Math.max(0, r.now - stored);
      const available = Math.min(r.burst, Number(row.tokens) + (elapsed * r.perSecond) / 1000);
      const granted = Math.max(0, Math.min(r.want, Math.floor(available)));
      const left = available - granted;
      await trx
        .updateTable('rate_buckets')
        .set({ tokens: left, updated_at: Math.max(stored, r.now) })
        .where('organization_id', '=', organizationId)
        .where('bucket', '=', bucket)
        .execute();
      return { granted, left };
    });
  }
}
