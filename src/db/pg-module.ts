import { createRequire } from 'node:module';
import type pg from 'pg';

const require = createRequire(import.meta.url);
let loaded: typeof pg | undefined;

/**
 * The `pg` driver, loaded on first use: a deployment on the embedded database never loads it (~6 MB resident and
 * ~90 ms of start measured). Synchronous (pg is CommonJS), so opening a database stays synchronous. The same module
 * object as `import pg from 'pg'` anywhere else in the process, so the type parser below applies to every pool.
 */
export function pgModule(): typeof pg {
  if (!loaded) {
    loaded = require('pg') as typeof pg;
    // int8 (COUNT, bigint timestamps) arrives as a string by default; every value we store fits a double.
    loaded.types.setTypeParser(20, (v: string) => Number(v));
  }
  return loaded;
}
