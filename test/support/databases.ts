import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Every database test runs on both dialects. AGENTRY_TEST_DBS=sqlite narrows it for quick local runs. */
export const TEST_DBS = (process.env.AGENTRY_TEST_DBS ?? 'sqlite,postgres').split(',').filter(Boolean) as ('sqlite' | 'postgres')[];

export const PG_ADMIN_URL = process.env.AGENTRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh, empty PostgreSQL database per test app; dropped by the returned function. */
export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `agentry_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(PG_ADMIN_URL);
  u.pathname = '/' + name;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
