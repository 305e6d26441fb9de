import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { createLogger } from '../../src/lib/logger.js';
import { notCounted, startWorkClock } from '../../src/tasks/run-deadline.js';
import { RunSupervisor } from '../../src/tasks/run-supervisor.js';
import { SlotLedger } from '../../src/tasks/slot-ledger.js';
import type { Execution } from '../../src/tasks/task-execution.js';
import { TaskQueueRepository } from '../../src/tasks/task-queue.repository.js';
import { TEST_DBS } from '../support/databases.js';
import { openMigratedDb } from '../support/migrated-db.js';
import { pendingTaskRow } from '../support/task-row.js';

/**
 * The supervisor's control pass (heartbeats, stop detection) against a real database. The race it must not lose: an
 * awaited submission's run starts beside its task's commit (LocalSlots), so a control pass can read this worker's
 * tasks just before that commit lands and look at the run just after. Such a run is not lost: under load on
 * PostgreSQL it was aborted as if its task had been taken over, and the task waited out its lease (30 s).
 */
const OWNER = 'worker-1';
const LEASE_MS = 30_000;

describe.each(TEST_DBS)('run supervisor (%s)', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await openMigratedDb(kind));
  });
  afterAll(() => close());

  /** A task committed as claimed by OWNER, as a submission handed to a local slot commits it. */
  const claimedRow = (id: string, now: number) => ({
    ...pendingTaskRow(id, now),
    status: 'executing',
    lease_owner: OWNER,
    lease_expires_at: now + LEASE_MS,
    heartbeat_at: now,
    fence: 1,
    execution_attempts: 1,
    started_at: now,
  });

  const execution = (id: string, unrecorded: boolean, lastBeat: number, runTimeoutMs = 0): Execution =>
    ({
      lease: { organizationId: 'org', taskId: id, fence: 1 },
      abort: new AbortController(),
      lastBeat,
      work: startWorkClock(lastBeat, runTimeoutMs),
      settling: false,
      unrecorded,
      buffered: [],
    }) as unknown as Execution;

  /** A supervisor whose reads of the worker's tasks can have something happen while they are in flight. */
  function supervisor(slots: SlotLedger, duringRead: () => Promise<void>, now: () => number) {
    const queue = new TaskQueueRepository(db);
    const owned = queue.owned.bind(queue);
    queue.owned = async (owner) => {
      const rows = await owned(owner);
      await duringRead();
      return rows;
    };
    const s = new RunSupervisor({ queue, clock: { now }, log: createLogger('silent'), leaseMs: LEASE_MS, owner: OWNER, slots });
    return { control: () => (s as unknown as { control(): Promise<void> }).control() };
  }

  it('does not take a run whose task is committed while the control read is in flight for lost', async () => {
    const slots = new SlotLedger({ concurrency: 4, maxPausedRuns: 0, maxPausedRunsPerOrg: 0, slotFreed: () => {}, organizationReleased: () => {} });
    const t0 = Date.now();
    const e = execution('landing', true, t0);
    slots.add(e);
    const { control } = supervisor(
      slots,
      async () => {
        // The submission's commit returns: the task is in the database, the run is recorded.
        await db.kysely.insertInto('tasks').values(claimedRow('landing', t0) as never).execute();
        e.unrecorded = false;
      },
      () => t0,
    );
    await control();
    expect(e.abort.signal.aborted).toBe(false);
    // The next pass sees the task and renews its lease when due.
    const later = t0 + LEASE_MS / 2;
    const next = supervisor(slots, async () => {}, () => later);
    await next.control();
    expect(e.abort.signal.aborted).toBe(false);
    const row = await db.kysely.selectFrom('tasks').select('lease_expires_at').where('id', '=', 'landing').executeTakeFirstOrThrow();
    expect(Number(row.lease_expires_at)).toBe(later + LEASE_MS);
  });

  it('still aborts a recorded run whose task is no longer this worker’s', async () => {
    const slots = new SlotLedger({ concurrency: 4, maxPausedRuns: 0, maxPausedRunsPerOrg: 0, slotFreed: () => {}, organizationReleased: () => {} });
    const t0 = Date.now();
    await db.kysely.insertInto('tasks').values({ ...claimedRow('taken', t0), lease_owner: 'worker-2' } as never).execute();
    const e = execution('taken', false, t0);
    slots.add(e);
    await supervisor(slots, async () => {}, () => t0).control();
    expect(e.abort.signal.aborted).toBe(true);
    expect(e.reason).toBe('lost');
  });

  it('stops a run past its deadline before reading the database, so a slow read cannot let it overstay', async () => {
    const slots = new SlotLedger({ concurrency: 4, maxPausedRuns: 0, maxPausedRunsPerOrg: 0, slotFreed: () => {}, organizationReleased: () => {} });
    const t0 = Date.now();
    await db.kysely.insertInto('tasks').values(claimedRow('overdue', t0) as never).execute();
    const e = execution('overdue', false, t0, 1_000);
    slots.add(e);
    let clock = t0 + 999;
    let seenDuringRead: boolean | undefined;
    const s = supervisor(slots, async () => void (seenDuringRead = e.abort.signal.aborted), () => clock);
    await s.control();
    expect(e.abort.signal.aborted).toBe(false);
    clock = t0 + 1_000;
    await s.control();
    expect(seenDuringRead).toBe(true);
    expect(e.reason).toBe('timeout');
  });

  it('does not count the time a run waits, and counts again once the wait is over', async () => {
    const slots = new SlotLedger({ concurrency: 4, maxPausedRuns: 0, maxPausedRunsPerOrg: 0, slotFreed: () => {}, organizationReleased: () => {} });
    const t0 = Date.now();
    await db.kysely.insertInto('tasks').values(claimedRow('waiting', t0) as never).execute();
    const e = execution('waiting', false, t0, 1_000);
    slots.add(e);
    let clock = t0 + 400;
    const s = supervisor(slots, async () => {}, () => clock);
    let release!: () => void;
    const waited = notCounted(e.work, () => clock, new Promise<void>((r) => (release = r)));
    // Long past the deadline while waiting: not stopped.
    clock = t0 + 5_000;
    await s.control();
    expect(e.abort.signal.aborted).toBe(false);
    release();
    await waited;
    // 400 ms worked before the wait: 600 ms are left after it.
    clock = t0 + 5_599;
    await s.control();
    expect(e.abort.signal.aborted).toBe(false);
    clock = t0 + 5_600;
    await s.control();
    expect(e.reason).toBe('timeout');
  });
});
