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
const TX_START = /^\s*(?:begin|start\s+transaction)\b/i;
const TX_END = /^\s*(?:commit|rollback)\s*$/i;

type PatchedClient = pg.PoolClient & { [PATCHED]?: { inTx: boolean; changedConfig: boolean } };

/**
 * What Kysely's PostgreSQL driver sees of the pool. Two changes to the plain pool:
 * - parameterised queries go as named prepared statements, so each connection parses and plans a query text once
 *   instead of on every execution (Kysely sends unnamed ones). The name is a hash of the text; texts are
 *   parameterised, so there are few of them;
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
      if (!client[PATCHED]) {
        const state = { inTx: false, changedConfig: false };
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
