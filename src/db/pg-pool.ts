import { createHash } from 'node:crypto';
import type pg from 'pg';

/** Longer texts (multi-row inserts of varying size) are not worth a server-side statement each. */
const NAMED_STATEMENT_MAX_CHARS = 2000;
const NAMED = Symbol('named statements');

/**
 * What Kysely's PostgreSQL driver sees of the pool: parameterised queries go as named prepared statements, so
 * each connection parses and plans a query text once instead of on every execution (Kysely sends unnamed ones).
 * The name is a hash of the text; texts are parameterised, so there are few of them.
 */
export function withNamedStatements(pool: pg.Pool) {
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
      const client = (await pool.connect()) as pg.PoolClient & { [NAMED]?: true };
      // Pool clients are reused: patch each once.
      if (!client[NAMED]) {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        client.query = ((config: unknown, values?: unknown[]) =>
          typeof config === 'string' && values?.length && config.length <= NAMED_STATEMENT_MAX_CHARS
            ? query({ name: nameOf(config), text: config, values })
            : query(config, values)) as pg.PoolClient['query'];
        client[NAMED] = true;
      }
      return client;
    },
    end: () => pool.end(),
  };
}

