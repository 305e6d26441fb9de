import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';

export type DeliveryRow = Selectable<Database['notification_deliveries']>;
export type AttemptRow = Selectable<Database['notification_attempts']>;

/** What one attempt leaves: the delivery's new state and the attempt's record. */
export interface AttemptResult {
  status: 'pending' | 'delivered' | 'failed';
  nextAttemptAt: number;
  lastError: string | null;
  deliveredAt: number | null;
  attempt: Omit<AttemptRow, 'organization_id' | 'delivery_id' | 'attempt'>;
}

/**
 * The notification outbox (SQL only; every API query filters by organization). The dispatcher's claim follows the
 * tasks queue's pattern: a due row is taken with `FOR UPDATE SKIP LOCKED` on PostgreSQL, by one atomic
 * `UPDATE ... WHERE id IN (SELECT ... LIMIT n) RETURNING` on SQLite. A claim moves `next_attempt_at` to the end of
 * its lease, so a dispatcher that dies mid-delivery leaves a row that falls due again by itself, and names its
 * `lease_owner` token, which every later write of that attempt checks.
 */
export class NotificationsRepository {
  constructor(private readonly db: Db) {}

  /** A read first on SQLite: an idle dispatcher's UPDATE would take the write lock for nothing. */
  async hasDue(now: number): Promise<boolean> {
    const r = await this.db.kysely
      .selectFrom('notification_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .limit(1)
      .executeTakeFirst();
    return !!r;
  }

  async claimDue(token: string, now: number, leaseMs: number, limit: number): Promise<DeliveryRow[]> {
    const k = this.db.kysely;
    const set = sql`lease_owner = ${token}, lease_expires_at = ${now + leaseMs}, next_attempt_at = ${now + leaseMs}, updated_at = ${now}`;
    const due = sql`status = 'pending' and next_attempt_at <= ${now}`;
    if (this.db.dialect === 'postgres') {
      const r = await sql<DeliveryRow>`
        with c as (select organization_id, id from notification_deliveries where ${due} order by next_attempt_at limit ${limit} for update skip locked)
        update notification_deliveries d set ${set} from c where d.organization_id = c.organization_id and d.id = c.id returning d.*`.execute(k);
      return r.rows;
    }
    const r = await sql<DeliveryRow>`
      update notification_deliveries set ${set}
      where (organization_id, id) in (select organization_id, id from notification_deliveries where ${due} order by next_attempt_at limit ${limit})
      returning *`.execute(k);
    return r.rows;
  }

  /** Records an attempt and the delivery's new state, if the claim `token` still holds it. False when it did not. */
  async recordAttempt(d: DeliveryRow, token: string, r: AttemptResult, now: number): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('notification_deliveries')
        .set((eb) => ({
          status: r.status,
          attempts: eb('attempts', '+', 1),
          next_attempt_at: r.nextAttemptAt,
          last_error: r.lastError,
          delivered_at: r.deliveredAt,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
        }))
        .where('organization_id', '=', d.organization_id)
        .where('id', '=', d.id)
        .where('lease_owner', '=', token)
        .returning('attempts')
        .executeTakeFirst();
      if (!updated) return false;
      await trx
        .insertInto('notification_attempts')
        .values({ organization_id: d.organization_id, delivery_id: d.id, attempt: Number(updated.attempts), ...r.attempt })
        .execute();
      return true;
    });
  }

  async listForTask(orgId: string, taskId: string): Promise<{ deliveries: DeliveryRow[]; attempts: AttemptRow[] }> {
    const deliveries = await this.db.kysely
      .selectFrom('notification_deliveries')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where('task_id', '=', taskId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    if (!deliveries.length) return { deliveries, attempts: [] };
    const attempts = await this.db.kysely
      .selectFrom('notification_attempts')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where(
        'delivery_id',
        'in',
        deliveries.map((d) => d.id),
      )
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
    return { deliveries, attempts };
  }

  async find(orgId: string, taskId: string, id: string): Promise<DeliveryRow | undefined> {
    return this.db.kysely
      .selectFrom('notification_deliveries')
      .selectAll()
      .where('organization_id', '=', orgId)
      .where('task_id', '=', taskId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /** Puts a delivery that is no longer pending back in the outbox, due now, with a new give-up time. */
  async resend(orgId: string, taskId: string, id: string, now: number, giveUpAt: number): Promise<DeliveryRow | undefined> {
    return this.db.kysely
      .updateTable('notification_deliveries')
      .set({ status: 'pending', next_attempt_at: now, give_up_at: giveUpAt, lease_owner: null, lease_expires_at: null, updated_at: now })
      .where('organization_id', '=', orgId)
      .where('task_id', '=', taskId)
      .where('id', '=', id)
      .where('status', '<>', 'pending')
      .returningAll()
      .executeTakeFirst();
  }

  async signingKey(orgId: string, agentId: string): Promise<{ sealed: string; createdAt: number } | undefined> {
    const r = await this.db.kysely
      .selectFrom('notification_signing_keys')
      .select(['sealed_secret', 'created_at'])
      .where('organization_id', '=', orgId)
      .where('agent_id', '=', agentId)
      .executeTakeFirst();
    return r ? { sealed: r.sealed_secret, createdAt: Number(r.created_at) } : undefined;
  }

  /** Stores a key unless the agent has one (two dispatchers creating one at once keep the first). */
  async insertSigningKeyIfAbsent(orgId: string, agentId: string, sealed: string, now: number): Promise<void> {
    await this.db.kysely
      .insertInto('notification_signing_keys')
      .values({ organization_id: orgId, agent_id: agentId, sealed_secret: sealed, created_at: now })
      .onConflict((oc) => oc.columns(['organization_id', 'agent_id']).doNothing())
      .execute();
  }

  async replaceSigningKey(orgId: string, agentId: string, sealed: string, now: number): Promise<void> {
    await this.db.kysely
      .insertInto('notification_signing_keys')
      .values({ organization_id: orgId, agent_id: agentId, sealed_secret: sealed, created_at: now })
      .onConflict((oc) => oc.columns(['organization_id', 'agent_id']).doUpdateSet({ sealed_secret: sealed, created_at: now }))
      .execute();
  }
}
