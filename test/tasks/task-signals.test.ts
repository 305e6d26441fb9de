import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.js';
import { createLogger } from '../../src/lib/logger.js';
import { TaskQueueRepository } from '../../src/tasks/task-queue.repository.js';
import { TaskSignals, type TaskSignal } from '../../src/tasks/task-signals.js';
import { createPgDatabase } from '../support/databases.js';

/**
 * Task signals cross processes through LISTEN/NOTIFY on PostgreSQL. Two Db handles stand for two processes (each has
 * its own LISTEN connection). A process sends the signals of one flush several to a payload, and drops its own
 * payloads without parsing them; it still takes the one-signal payloads of processes of an earlier version.
 */
describe('task signals across processes (PostgreSQL)', () => {
  let pgDb: Awaited<ReturnType<typeof createPgDatabase>>;
  let pgUrl: string;
  let a: Db;
  let b: Db;
  const log = createLogger('silent');
  const signalsOf = (db: Db) => new TaskSignals(log, (ch, payloads) => new TaskQueueRepository(db).notify(ch, payloads), db.notifications);
  beforeAll(async () => {
    pgDb = await createPgDatabase();
    pgUrl = pgDb.url;
    a = openDatabase({ url: pgUrl, sqlitePath: '', poolSize: 2 });
    b = openDatabase({ url: pgUrl, sqlitePath: '', poolSize: 2 });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await pgDb?.drop();
  });

  /** Subscribes, waits until listening, and collects what arrives. */
  async function listening(s: TaskSignals): Promise<TaskSignal[]> {
    const heard: TaskSignal[] = [];
    s.on((x) => heard.push(x));
    await vi.waitFor(() => expect(heard.some((x) => x.kind === 'queued')).toBe(true), { timeout: 5000 }); // onConnected announces itself as a queued signal
    heard.length = 0;
    return heard;
  }

  it('delivers every signal of a flush to the other process, once, and not back to the sender', async () => {
    const [sa, sb] = [signalsOf(a), signalsOf(b)];
    const [heardA, heardB] = await Promise.all([listening(sa), listening(sb)]);
    // What crosses the wire: a third listener counting notifications and their sizes.
    const raw = new pg.Client({ connectionString: pgUrl });
    const payloads: string[] = [];
    raw.on('notification', (m) => payloads.push(m.payload ?? ''));
    await raw.connect();
    await raw.query('LISTEN agentry_tasks');
    // 300 tasks: several payloads (each under PostgreSQL's 8,000-byte limit, which would refuse the NOTIFY).
    const ids = Array.from({ length: 300 }, (_, i) => `task-${i}-${'é'.repeat(20)}`);
    ids.forEach((taskId, i) => sa.publish({ kind: 'task', organizationId: 'org-1', taskId, statusChanged: i % 10 === 0 }));
    sa.publish({ kind: 'queued', inbox: true });
    await vi.waitFor(() => expect(heardB.length).toBeGreaterThanOrEqual(301), { timeout: 5000 });
    await new Promise((r) => setTimeout(r, 100));
    expect(heardB.filter((x) => x.kind === 'task').map((x) => x.kind === 'task' && x.taskId)).toEqual(ids);
    expect(heardB.find((x) => x.kind === 'task' && x.taskId === ids[10])).toEqual({ kind: 'task', organizationId: 'org-1', taskId: ids[10], statusChanged: true });
    expect(heardB.find((x) => x.kind === 'task' && x.taskId === ids[11])).toMatchObject({ statusChanged: false });
    expect(heardB.filter((x) => x.kind === 'queued')).toEqual([{ kind: 'queued', inbox: true }]);
    // The sender heard each signal once, in-process, and nothing from PostgreSQL.
    expect(heardA).toHaveLength(301);
    // Several signals to a payload: 301 signals of ~120 bytes in a handful of NOTIFYs, each under the limit.
    expect(payloads.length).toBeGreaterThan(1);
    expect(payloads.length).toBeLessThan(10);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    await raw.end();
    await Promise.all([sa.close(), sb.close()]);
  });

  it("carries a queued signal's interleaved mark (TaskInbox.interleaves), merged over a flush", async () => {
    const [sa, sb] = [signalsOf(a), signalsOf(b)];
    const [, heardB] = await Promise.all([listening(sa), listening(sb)]);
    sa.publish({ kind: 'queued', inbox: true });
    sa.publish({ kind: 'queued', inbox: true, interleaved: true });
    sa.publish({ kind: 'queued', inbox: true });
    await vi.waitFor(() => expect(heardB.length).toBeGreaterThanOrEqual(1), { timeout: 5000 });
    await new Promise((r) => setTimeout(r, 100));
    expect(heardB).toEqual([{ kind: 'queued', inbox: true, interleaved: true }]);
    await Promise.all([sa.close(), sb.close()]);
  });

  it('takes the one-signal payloads of an earlier version, and ignores malformed ones', async () => {
    const sb = signalsOf(b);
    const heardB = await listening(sb);
    for (const p of ['not json', '[1]', '{"signals":[null,1]}', JSON.stringify({ kind: 'task', organizationId: 'o', taskId: 't', statusChanged: true, from: 'old' })])
      await sql`select pg_notify('agentry_tasks', ${p})`.execute(a.kysely);
    await vi.waitFor(() => expect(heardB.some((x) => x.kind === 'task')).toBe(true), { timeout: 5000 });
    expect(heardB).toEqual([{ kind: 'task', organizationId: 'o', taskId: 't', statusChanged: true }]);
    await sb.close();
  });
});

