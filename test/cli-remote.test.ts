import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../src/server.js';
import { startOpenAIServer, type ScriptedLlmServer } from './fakes/openai-server.js';
import { createTestEnv, startTestServer, TEST_DBS, type TestEnv } from './support/harness.js';

/**
 * The remote commands (`agentry agents|invoke|tasks`) as real processes against a running server, an agent on the
 * scripted model; `keys list|revoke` against GET/DELETE /v1/api_keys with an admin key.
 */

const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);

describe.each(TEST_DBS)('command line against a running server (%s)', (kind) => {
  let env: TestEnv;
  let server: RunningServer;
  let llm: ScriptedLlmServer;
  let key = '';
  let agentId = '';

  /** Runs `agentry ...args` with AGENTRY_URL / AGENTRY_API_KEY set; flags may override them. */
  const cli = (args: string[], extraEnv: Record<string, string> = {}) =>
    run(process.execPath, [join(ROOT, 'bin', 'agentry.mjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, AGENTRY_URL: server.apiUrl!, AGENTRY_API_KEY: key, ...extraEnv },
    });

  beforeAll(async () => {
    llm = await startOpenAIServer();
    llm.handle((req) => ({ text: `you said: ${req.lastUserText}` }));
    env = await createTestEnv(kind, { AGENTRY_EGRESS_ALLOW: '127.0.0.1' });
    server = await startTestServer(env);
    key = (await server.container.orgs.createApiKey('org-cli', 'test')).key;
    const r = await fetch(`${server.apiUrl}/v1/agents`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Echo',
        model_provider: 'openai',
        model_name: 'gpt-4.1',
        llm_api_base: llm.baseUrl,
        llm_credentials: { name: 'key', value: 'sk-test' },
        output_format: 'text',
        should_stage_before_publish: false,
      }),
    });
    agentId = (await r.json()).id;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await env?.cleanup();
    await llm?.close();
  });

  it('agents list prints one line per agent; agents get prints the agent as JSON', async () => {
    const list = await cli(['agents', 'list']);
    expect(list.stdout.trim().split('\n')).toEqual([`${agentId}\tEcho\tACTIVE\topenai/gpt-4.1`]);
    expect(list.stderr).toContain('(1 agents)');
    const json = JSON.parse((await cli(['agents', 'list', '--json'])).stdout);
    expect(json).toMatchObject({ total: 1, items: [{ id: agentId, name: 'Echo' }] });
    const got = JSON.parse((await cli(['agents', 'get', agentId])).stdout);
    expect(got).toMatchObject({ id: agentId, name: 'Echo', model_provider: 'openai' });
    // The credential stays masked on the way out.
    expect(JSON.stringify(got)).not.toContain('sk-test');
  });

  it('invoke waits and prints the answer; --async prints the task id; --stream prints the answer as it comes', async () => {
    expect((await cli(['invoke', agentId, 'hello there'])).stdout).toBe('you said: hello there\n');

    const id = (await cli(['invoke', agentId, 'later', '--async'])).stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const streamed = await cli(['invoke', agentId, 'stream this', '--stream']);
    expect(streamed.stdout).toBe('you said: stream this\n');
  });

  it('tasks list and tasks get show the tasks the commands created', async () => {
    // The asynchronous one may still be running: wait for it through the CLI itself.
    for (let i = 0; ; i++) {
      const { stdout } = await cli(['tasks', 'list', '--agent', agentId, '--status', 'completed']);
      if (stdout.trim().split('\n').length === 3) break;
      if (i > 100) throw new Error('the tasks did not complete');
      await new Promise((r) => setTimeout(r, 100));
    }
    const page = JSON.parse((await cli(['tasks', 'list', '--json'])).stdout);
    expect(page.total).toBe(3);
    const lines = (await cli(['tasks', 'list'])).stdout.trim().split('\n');
    expect(lines.map((l) => l.split('\t').slice(1, 3))).toEqual([
      [agentId, 'completed'],
      [agentId, 'completed'],
      [agentId, 'completed'],
    ]);
    const first = lines[0]!.split('\t')[0]!;
    expect(JSON.parse((await cli(['tasks', 'get', first])).stdout)).toMatchObject({ id: first, agent_id: agentId, status: 'completed' });
  });

  it('keys list shows the keys without secrets; keys revoke revokes one, which the server then refuses', async () => {
    const made = await fetch(`${server.apiUrl}/v1/api_keys`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ci-bot', role: 'member' }) });
    const { id, key: botKey } = (await made.json()) as { id: string; key: string };
    const rowOf = async () => (await cli(['keys', 'list'])).stdout.split('\n').map((l) => l.split('\t')).find((cells) => cells[0] === id);
    const before = await rowOf();
    expect(before?.slice(1, 3)).toEqual(['ci-bot', 'member']);
    expect(before?.[4]).toBe('');
    expect((await cli(['keys', 'list'])).stdout).not.toContain(botKey);
    const revoked = await cli(['keys', 'revoke', id]);
    expect(revoked.stderr).toContain(`revoked ${id}`);
    expect((await rowOf())?.[4]).toMatch(/^revoked /);
    const refused = await fetch(`${server.apiUrl}/v1/agents`, { headers: { 'x-api-key': botKey } });
    expect(refused.status).toBe(403);
  });

  it('a wrong key, a missing task, a server that is not there and bad usage fail with a message and an exit code', async () => {
    await expect(cli(['agents', 'list'], { AGENTRY_API_KEY: 'agk_wrong' })).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('403') });
    await expect(cli(['tasks', 'get', 'no-such-task'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('404: Task not found') });
    // A flag overrides the environment.
    await expect(cli(['agents', 'list', '--url', 'http://127.0.0.1:1'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('cannot reach http://127.0.0.1:1') });
    await expect(cli(['invoke', agentId])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('invoke needs an AGENT_ID and a prompt') });
    await expect(cli(['agents', 'list', '--bogus'])).rejects.toMatchObject({ code: 2 });
  });
});
