import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { keyLookup } from '../../src/orgs/orgs.service.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/**
 * API keys are cached on every request's hot path, exactly (Db.configVersion): a key revoked in the database is
 * refused from the next request on, whether this process revoked it or another one did (an operator's SQL, another
 * instance); on PostgreSQL, as soon as the change's notification arrives.
 */
describe.each(TEST_DBS)('API key revocation (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(() => t.close());

  const status = async (key: string) => (await t.req('GET', '/v1/agents', undefined, { 'x-api-key': key })).statusCode;
  const revoke = (db: { kysely: TestApp['c']['db']['kysely'] }, key: string) =>
    db.kysely.updateTable('api_keys').set({ revoked_at: Date.now() }).where('lookup', '=', keyLookup(key)).execute();

  it('refuses a key revoked by this process at the next request', async () => {
    const { key } = await t.c.orgs.createApiKey('org-a', 'to revoke here');
    expect(await status(key)).toBe(200);
    expect(await status(key)).toBe(200);
    await revoke(t.c.db, key);
    expect(await status(key)).toBe(403);
  });

  it('refuses a key revoked by another process as soon as the change is seen', async () => {
    const { key } = await t.c.orgs.createApiKey('org-a', 'to revoke elsewhere');
    expect(await status(key)).toBe(200);
    const other = openDatabase({ url: t.testEnv.env.DATABASE_URL, sqlitePath: join(t.testEnv.dataDir, 'agentry.db') });
    try {
      await revoke(other, key);
    } finally {
      await other.close();
    }
    const deadline = Date.now() + 2000;
    let last = await status(key);
    while (last !== 403 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      last = await status(key);
    }
    expect(last).toBe(403);
    // The organization's other keys are unaffected.
    expect(await status(t.keyA)).toBe(200);
  });
});
