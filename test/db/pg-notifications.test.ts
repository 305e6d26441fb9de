import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PgNotifications, type ChannelListener } from '../../src/db/pg-notifications.js';
import { createLogger } from '../../src/lib/logger.js';
import { createPgDatabase, TEST_DBS } from '../support/databases.js';

/**
 * One LISTEN connection per process for every channel: PostgreSQL wakes every listening backend of the database for
 * each NOTIFY, so each extra listening connection costs every notification one more backend wake-up.
 */
describe.skipIf(!TEST_DBS.includes('postgres'))('PgNotifications (postgres)', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  async function setup() {
    const store = await createPgDatabase();
    cleanup.push(() => store.drop());
    const admin = new pg.Client({ connectionString: store.url });
    await admin.connect();
    cleanup.push(() => admin.end());
    const hub = new PgNotifications(store.url, createLogger('silent'));
    cleanup.push(() => hub.close());
    const listeners = () =>
      admin.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and query like 'LISTEN%'`).then((r) => r.rows[0]!.n);
    const notify = (channel: string, payload: string) => admin.query('select pg_notify($1, $2)', [channel, payload]);
    return { hub, admin, listeners, notify };
  }

  /** A listener that records what reaches it. */
  function recorder(channel: string) {
    const seen = { payloads: [] as string[], connected: 0, disconnected: 0 };
    const l: ChannelListener = {
      channel,
      what: channel,
      onNotification: (p) => seen.payloads.push(p),
      onConnected: () => seen.connected++,
      onDisconnected: () => seen.disconnected++,
    };
    return { l, seen };
  }

  it('listens to every channel on one connection and hands each notification to its own channel only', async () => {
    const { hub, listeners, notify } = await setup();
    const tasks = recorder('agentry_t_tasks');
    const jobs = recorder('agentry_t_jobs');
    const tasks2 = recorder('agentry_t_tasks');
    const subs = [hub.subscribe(tasks.l), hub.subscribe(jobs.l), hub.subscribe(tasks2.l)];
    await Promise.all(subs.map((s) => s.start()));
    expect([tasks.seen.connected, jobs.seen.connected, tasks2.seen.connected]).toEqual([1, 1, 1]);
    expect(await listeners()).toBe(1);

    await notify('agentry_t_tasks', 'a');
    await notify('agentry_t_jobs', 'b');
    await until(() => tasks.seen.payloads.length === 1 && jobs.seen.payloads.length === 1 && tasks2.seen.payloads.length === 1);
    expect([tasks.seen.payloads, jobs.seen.payloads, tasks2.seen.payloads]).toEqual([['a'], ['b'], ['a']]);
  });

  it('a closed subscription hears nothing more; the others keep listening', async () => {
    const { hub, notify } = await setup();
    const jobs = recorder('agentry_t_jobs');
    const tasks = recorder('agentry_t_tasks');
    const jobsSub = hub.subscribe(jobs.l);
    await jobsSub.start();
    await hub.subscribe(tasks.l).start();
    await jobsSub.close();
    expect(jobs.seen.disconnected).toBe(1);
    await notify('agentry_t_jobs', 'lost');
    await notify('agentry_t_tasks', 'heard');
    await until(() => tasks.seen.payloads.length === 1);
    expect(jobs.seen.payloads).toEqual([]);
  });

  it('after the connection is cut, tells every subscriber, reconnects and listens to every channel again', async () => {
    const { hub, admin, listeners, notify } = await setup();
    const tasks = recorder('agentry_t_tasks');
    const config = recorder('agentry_t_config');
    await hub.subscribe(tasks.l).start();
    await hub.subscribe(config.l).start();
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'LISTEN%'`);
    await until(() => tasks.seen.disconnected === 1 && config.seen.disconnected === 1);
    // Reconnected about a second later: each subscriber is told (it re-reads whatever it missed).
    await until(() => tasks.seen.connected === 2 && config.seen.connected === 2, 5000);
    expect(await listeners()).toBe(1);
    await notify('agentry_t_config', 'again');
    await until(() => config.seen.payloads.length === 1);
    expect(config.seen.payloads).toEqual(['again']);
  });

  it('gives up reconnecting while no subscriber wants it, and connects again when one starts', async () => {
    const { hub, admin, listeners } = await setup();
    let wanted = true;
    const tasks = recorder('agentry_t_tasks');
    const sub = hub.subscribe({ ...tasks.l, wanted: () => wanted });
    await sub.start();
    wanted = false;
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'LISTEN%'`);
    await until(() => tasks.seen.disconnected === 1);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await listeners()).toBe(0);
    wanted = true;
    await sub.start();
    expect(tasks.seen.connected).toBe(2);
    expect(await listeners()).toBe(1);
  });
});

async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
