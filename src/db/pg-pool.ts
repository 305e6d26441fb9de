import { createHash } from 'node:crypto';
import type pg from 'pg';
import { CONFIG_CHANGE } from './config-change.js';

/**
 * Longer texts (multi-row inserts of hundreds of rows, whose text changes with the row count) are not worth a
 * server-side statement each. The limit was 2,000 characters, which left the worker's outcome statement (about
 * 3,000, the same text for every run) parsed and planned on every run: 0.6-0.8 ms of the database's time each.
 */
const NAMED_STATEMENT_MAX_CHARS = 8000;
const PATCHED = Symbol('patched');
/**
 * A connection drops its statements' plans after this many checkouts, then after twice as many since, and so on.
 * PostgreSQL plans a prepared statement for the tables as they are when it first settles on a generic plan (from
 * its sixth execution). A fresh deployment's first runs find `tasks` nearly empty, where a hash join over a
 * sequential scan is the cheapest plan for the worker's outcome statement (an update joined to unnest() arrays);
 * kept by a busy connection, it read the whole table on every run: PostgreSQL's CPU per synchronous run went from
 * 1.4 to 3.4 ms within 15 s of load. `discard plans` keeps the statements (no new parse) and plans them again from
 * the tables as they are; doubling the interval keeps pace with a growing table at a vanishing cost. Planning every
 * execution instead (plan_cache_mode=force_custom_plan) cost ~0.47 ms of the database's CPU per outcome statement.
 * Autovacuum's ANALYZE also invalidates plans, but only once a minute at best.
 */
export const FIRST_PLAN_REFRESH = 64;
const TX_START = /^\s*(?:begin|start\s+transaction)\b/i;
const TX_END = /^\s*(?:commit|rollback)\s*$/i;

type PatchedClient = pg.PoolClient & { [PATCHED]?: { inTx: boolean; changedConfig: boolean; checkouts: number; refreshAt: number } };

/**
 * What Kysely's PostgreSQL driver sees of the pool. Two changes to the plain pool:
 * - parameterised queries go as named prepared statements, so each connection parses and plans a query text once
 *   instead of on every execution (Kysely sends unnamed ones), and plans it again now and then (FIRST_PLAN_REFRESH).
 *   The name is a hash of the text; texts are parameterised, so there are few of them;
 * - `onConfigChange` is called when a statement writing to a configuration table (config-change.ts) starts, and
 *   again once its change is committed or rolled back: this process's caches never keep a value read while the
 *   change was in flight (see PgConfigWatch).
 */
export function withPatchedClients(pool: pg.Pool, onConfigChange: () => void) {
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name) {
      name = `k${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    async connect() {
      const client = (await pool.connect()) as PatchedClient;
      // Pool clients are reused: patch each once.
      const patched = client[PATCHED];
      if (patched && ++patched.checkouts >= patched.refreshAt) {
        patched.refreshAt *= 2;
        // Sent ahead of the caller's statements (a client runs its queries in order), outside any transaction.
        void client.query('discard plans').catch(() => undefined);
      }
      if (!patched) {
        const state = { inTx: false, changedConfig: false, checkouts: 0, refreshAt: FIRST_PLAN_REFRESH };
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
        client.query = ((config: unknown, values?: unknown[]) => {
          const text = typeof config === 'string' ? config : '';
          const ends = TX_END.test(text);
          if (TX_START.test(text)) state.inTx = true;
          if (CONFIG_CHANGE.test(text)) {
            state.changedConfig = true;
            onConfigChange();
          }
          const sent =
            text && values?.length && text.length <= NAMED_STATEMENT_MAX_CHARS
              ? query({ name: nameOf(text), text, values })
              : query(config, values);
          const final = state.changedConfig && (!state.inTx || ends);
          if (ends) state.inTx = false;
          if (!final) return sent;
          // Committed, rolled back, or an autocommit statement: once it is done, the change is final.
          state.changedConfig = false;
          return sent.then(
            (r) => (onConfigChange(), r),
            (e: unknown) => {
              onConfigChange();
              throw e;
            },
          );
        }) as pg.PoolClient['query'];
        client[PATCHED] = state;
      }
      return client;
    },
    end: () => pool.end(),
  };
}
