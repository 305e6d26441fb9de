import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestEnv, type TestEnv } from '../support/harness.js';

/** Issue 20: the data directory and everything in it is the service user's alone (0700 directories, 0600 files). */
describe('data directory modes', () => {
  let env: TestEnv | undefined;
  let c: Container | undefined;
  afterEach(async () => {
    await c?.close();
    c = undefined;
    await env?.cleanup();
  });

  const mode = (p: string) => statSync(p).mode & 0o777;
  const start = async (e: TestEnv) => {
    // No AGENTRY_MASTER_KEY: the key file is generated into the data directory.
    const { AGENTRY_MASTER_KEY: _, ...rest } = e.env;
    return createContainer(loadConfig({ ...rest, AGENTRY_ROLES: 'api' }), { log: createLogger('silent') });
  };
  const upload = async (container: Container) => {
    const org = (await container.orgs.createApiKey('org-modes', 'test')).organization.id;
    const [stored] = await container.files.ingest(org, [{ name: 'notes.txt', bytes: Buffer.from('private notes') }]);
    return { org, id: stored!.id };
  };

  it('creates the database (with -wal and -shm), master.key and uploaded files 0600 in 0700 directories', async () => {
    env = await createTestEnv('sqlite');
    const dir = join(env.dataDir, 'nested', 'data');
    env.env.AGENTRY_DATA_DIR = dir;
    c = await start(env);
    const { org, id } = await upload(c);

    expect(mode(dir)).toBe(0o700);
    for (const f of ['agentry.db', 'agentry.db-wal', 'agentry.db-shm', 'master.key']) {
      expect(existsSync(join(dir, f)), f).toBe(true);
      expect(mode(join(dir, f)), f).toBe(0o600);
    }
    expect(mode(join(dir, 'files'))).toBe(0o700);
    expect(mode(join(dir, 'files', org))).toBe(0o700);
    expect(mode(join(dir, 'files', org, id))).toBe(0o600);
    expect(readdirSync(join(dir, 'files', org))).toEqual([id]);
  });

  it('tightens what an older version created 0755/0644, on start', async () => {
    env = await createTestEnv('sqlite');
    const dir = env.dataDir;
    env.env.AGENTRY_DATA_DIR = dir;
    c = await start(env);
    const { org } = await upload(c);
    await c.close();
    c = undefined;
    // As an older version left them (the database's -wal/-shm are gone after a clean close; put them back).
    writeFileSync(join(dir, 'agentry.db-shm'), Buffer.alloc(0), { flag: 'a' });
    for (const f of ['agentry.db', 'agentry.db-shm', 'master.key']) chmodSync(join(dir, f), 0o644);
    mkdirSync(join(dir, 'files', 'other-org'));
    for (const d of [dir, join(dir, 'files'), join(dir, 'files', org), join(dir, 'files', 'other-org')]) chmodSync(d, 0o755);

    c = await start(env);
    expect(mode(dir)).toBe(0o700);
    for (const f of ['agentry.db', 'agentry.db-wal', 'agentry.db-shm', 'master.key']) expect(mode(join(dir, f)), f).toBe(0o600);
    for (const d of ['files', join('files', org), join('files', 'other-org')]) expect(mode(join(dir, d)), d).toBe(0o700);
    // And new writes are private too.
    const again = await upload(c);
    expect(mode(join(dir, 'files', again.org, again.id))).toBe(0o600);
  });
});
