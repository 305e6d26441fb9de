import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, TEST_DBS, type TestEnv } from './support/harness.js';

/**
 * The commands a user types: `agentry keys create`, `agentry migrate`, and `npm start`'s production path
 * (`scripts/build.mjs` then `node dist/main.js serve`), exercised as real processes.
 */

const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);
const BOOTSTRAP = 'agk_bootstrap_key_for_cli_test_0001';

async function cli(env: Record<string, string>, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [join(ROOT, 'bin', 'agentry.mjs'), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The lines of a file another process is about to write. */
async function waitForFile(path: string): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    if (existsSync(path)) return readFileSync(path, 'utf8').split('\n');
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${path} was not written`);
}

async function waitForHealth(base: string, proc: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the server exited with ${proc.exitCode}`);
    try {
      const r = await fetch(`${base}/health`);
      if (r.ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error('the server did not answer /health');
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  // The production build the server below runs; the same step `npm start` takes.
  await run(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
}, 120_000);

describe.each(TEST_DBS)('command line and production start (%s)', (kind) => {
  let env: TestEnv;
  let server: ChildProcess | undefined;
  let api = '';
  let webhook = '';
  const keys: string[] = [];

  beforeAll(async () => {
    env = await createTestEnv(kind);
  });
  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    await env?.cleanup();
  });

  it('keys create prints only a new key, creating the organization when needed', async () => {
    for (const org of ['acme', 'globex']) {
      const { stdout } = await cli(env.env, 'keys', 'create', '--org', org);
      expect(stdout).toMatch(/^agk_[A-Za-z0-9_-]{43}\n$/);
      keys.push(stdout.trim());
    }
    const again = (await cli(env.env, 'keys', 'create', '--org', 'acme')).stdout.trim();
    expect(again).not.toBe(keys[0]);
  });

  it('keys create without --org explains the usage and fails', async () => {
    await expect(cli(env.env, 'keys', 'create')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('usage: agentry') });
  });

  it('keys create --role, keys list and keys revoke manage an organization\'s keys (docs/access.md)', async () => {
    const viewerKey = (await cli(env.env, 'keys', 'create', '--org', 'roles-org', '--name', 'viewer', '--role', 'read-only')).stdout.trim();
    const listed = (await cli(env.env, 'keys', 'list', '--org', 'roles-org')).stdout.trim().split('\n').map((l) => JSON.parse(l));
    const viewer = listed.find((k) => k.name === 'viewer');
    expect(viewer).toMatchObject({ role: 'read-only', active: true });
    expect(JSON.stringify(listed)).not.toContain(viewerKey);
    const revoked = JSON.parse((await cli(env.env, 'keys', 'revoke', '--org', 'roles-org', '--id', viewer.id)).stdout);
    expect(revoked).toMatchObject({ id: viewer.id, active: false });
    await expect(cli(env.env, 'keys', 'create', '--org', 'roles-org', '--role', 'owner')).rejects.toMatchObject({ code: 2 });
  }, 120_000);

  it('migrate is idempotent', async () => {
    const { stderr } = await cli(env.env, 'migrate');
    expect(stderr).toContain('migrations applied');
  });

  it('the built server serves /health and creates an agent with the bootstrap key', async () => {
    const apiPort = await freePort();
    const webhookPort = await freePort();
    const loadedFile = join(env.env.AGENTRY_DATA_DIR!, 'loaded-packages.txt');
    server = spawn(process.execPath, ['--import', join(ROOT, 'test', 'fixtures', 'loaded-packages.mjs'), join(ROOT, 'dist', 'main.js'), 'serve'], {
      cwd: ROOT,
      stdio: 'ignore',
      env: { ...process.env, ...env.env, AGENTRY_BOOTSTRAP_API_KEY: BOOTSTRAP, AGENTRY_API_PORT: String(apiPort), AGENTRY_WEBHOOK_PORT: String(webhookPort), LOADED_PACKAGES_FILE: loadedFile },
    });
    api = `http://127.0.0.1:${apiPort}`;
    webhook = `http://127.0.0.1:${webhookPort}`;
    await waitForHealth(api, server);
    await waitForHealth(webhook, server);
    expect(await (await fetch(`${api}/health`)).json()).toBe('ok');
    // The PostgreSQL driver is loaded by a deployment on PostgreSQL only (~6 MB resident on the embedded database).
    server.kill('SIGUSR2');
    const loaded = await waitForFile(loadedFile);
    expect(loaded).toContain('fastify');
    if (kind === 'postgres') expect(loaded).toContain('pg');
    else expect(loaded).not.toContain('pg');
    // So are the MCP and A2A SDKs, by the first MCP or A2A use (~10 and ~8 MB resident at idle).
    expect(loaded).toContain('@ai-sdk/provider-utils');
    expect(loaded).not.toContain('@modelcontextprotocol/sdk');
    expect(loaded).not.toContain('@a2a-js/sdk');
    // So are the provider-specific AI SDK packages, by the first model built on them (~4 MB together), and the
    // pretty log printer, by the pretty log format.
    for (const pkg of ['@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/google', 'pino-pretty']) expect(loaded).not.toContain(pkg);
    const r = await fetch(`${api}/v1/agents`, {
      method: 'POST',
      headers: { 'x-api-key': BOOTSTRAP, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Support bot' }),
    });
    expect(r.status).toBe(201);
    const agent = await r.json();
    expect(agent).toMatchObject({ name: 'Support bot', version: 2, status: 'ACTIVE' });
    expect(agent.webhook_url).toBe(`http://localhost:${webhookPort}/?agent_id=${agent.id}&asynchronous=false`);
    // The console's static files were copied into the build.
    const page = await fetch(`${api}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });

  it('organizations created with keys create cannot see each other\'s agents', async () => {
    const [acme, globex] = keys;
    const post = (key: string, name: string) =>
      fetch(`${api}/v1/agents`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    const a = await (await post(acme, 'Acme agent')).json();
    const g = await (await post(globex, 'Globex agent')).json();
    const list = async (key: string) => (await (await fetch(`${api}/v1/agents?per_page=50`, { headers: { 'x-api-key': key } })).json()).items.map((x: { name: string }) => x.name);
    expect(await list(acme)).toEqual(['Acme agent']);
    expect(await list(globex)).toEqual(['Globex agent']);
    const cross = await fetch(`${api}/v1/agents/${g.id}`, { headers: { 'x-api-key': acme } });
    expect(cross.status).toBe(404);
    expect(await cross.json()).toEqual({ detail: 'Agent not found' });
    // The same name may exist in two organizations.
    expect((await post(globex, 'Acme agent')).status).toBe(201);
    expect((await fetch(`${api}/v1/agents/${a.id}`, { headers: { 'x-api-key': acme } })).status).toBe(200);
  });
});
