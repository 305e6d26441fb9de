import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TEST_DBS } from '../support/harness.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';
import { consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';

const eventually = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 100 });

/** Custom functions (editor and test run), MCP servers (tools list) and skills in a real browser. */
describe.each(TEST_DBS)('console tool pages (%s)', (kind) => {
  let w: ConsoleWorld;
  let mcp: FakeMcpServer;
  let page: Page;
  consoleWorldPerSuite(kind, (x) => (w = x), { page: () => page });
  beforeAll(async () => {
    mcp = await startFakeMcpServer({ auth: { header: 'authorization', value: 'Bearer mcp-key-77' } });
    page = await w.signedInPage();
  }, 90_000);
  afterAll(async () => mcp?.close());

  it('creates a custom function, edits its code and test-runs it', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'Functions' }).click();
    await page.getByRole('heading', { name: 'Custom functions', level: 1 }).waitFor();
    await page.getByText('New function').click();
    const create = page.getByRole('form', { name: 'New custom function' });
    await create.getByLabel('Name', { exact: true }).fill('word_count');
    await create.getByLabel(/Input schema/).fill('{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}');
    await create.getByRole('button', { name: 'Create function' }).click();
    await page.getByRole('heading', { name: 'word_count', level: 1 }).waitFor();

    const editor = page.getByRole('form', { name: 'Edit the function' });
    await editor.getByLabel('Code (JavaScript)').fill('async function run({ text }) { return { words: text.split(/\\s+/).filter(Boolean).length }; }');
    await editor.getByRole('button', { name: 'Save' }).click();
    await eventually(() => page.locator('#announcer').textContent()).toContain('Saved');

    const run = page.getByRole('form', { name: 'Test run' });
    // Arguments the schema refuses: the API's 422 shows, nothing runs.
    await run.getByLabel('Arguments (JSON)').fill('{"text": 5}');
    await run.getByRole('button', { name: 'Run' }).click();
    await run.getByRole('alert').or(run.locator('.field-error:not([hidden])')).first().waitFor();
    await run.getByLabel('Arguments (JSON)').fill('{"text": "one two three"}');
    await run.getByRole('button', { name: 'Run' }).click();
    const out = page.locator('.try-result');
    await out.getByText('"words": 3').waitFor();
    expect(await out.locator('.badge').first().textContent()).toBe('completed');
  });

  it('registers an MCP server with a write-only key and lists its tools', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'MCP servers' }).click();
    await page.getByRole('heading', { name: 'MCP servers', level: 1 }).waitFor();
    await page.getByText('Register a server').click();
    const form = page.getByRole('form', { name: 'Register an MCP server' });
    await form.getByLabel('Name', { exact: true }).fill('Calculator');
    await form.getByLabel('URL', { exact: true }).fill(mcp.mcpUrl);
    await form.getByLabel('Authentication').selectOption('api_key');
    expect(await form.getByLabel('API key').getAttribute('type')).toBe('password');
    await form.getByLabel('API key').fill('mcp-key-77');
    await form.getByLabel(/Allowed tools/).fill('add, echo');
    await form.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'Calculator', level: 1 }).waitFor();
    const tools = page.getByRole('table', { name: 'Tools of Calculator' });
    const add = tools.getByRole('row').filter({ hasText: 'Adds two numbers' });
    await add.waitFor();
    expect(await add.textContent()).toContain('yes');
    expect(await tools.getByRole('row').filter({ hasText: 'whoami' }).textContent()).toContain('not in allowed tools');
    expect(await page.content()).not.toContain('mcp-key-77');
  });

  it('adds an organization skill next to the built-in ones and deletes it', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'Skills' }).click();
    await page.getByRole('heading', { name: 'Skills', level: 1 }).waitFor();
    await page.getByText('New skill').click();
    const form = page.getByRole('form', { name: 'New skill' });
    await form.getByLabel('Name', { exact: true }).fill('bad name!');
    await form.getByLabel('Description').fill('Writes release notes');
    await form.getByLabel(/Instructions/).fill('Group changes by area.');
    await form.getByRole('button', { name: 'Create skill' }).click();
    await eventually(() => form.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await form.getByLabel('Name', { exact: true }).fill('release-notes');
    await form.getByRole('button', { name: 'Create skill' }).click();
    const row = page.getByRole('table', { name: 'Skills' }).getByRole('row').filter({ hasText: 'release-notes' });
    await row.waitFor();
    expect(await row.textContent()).toContain('organization');
    await row.getByRole('button', { name: 'Delete release-notes' }).click();
    await page.locator('#confirm-ok').click();
    await eventually(() => row.count()).toBe(0);
  });

  it('lists every schedule of the organization with its agent and next run', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Digest writer' });
    const s = await w.api('POST', `/v1/agents/${agent.id}/schedules`, { name: 'Weekly digest', interval_seconds: 7 * 86400, invocation: { input: { text: 'Write the digest' } } });
    expect(s.status).toBe(201);
    await page.getByRole('link', { name: 'Schedules' }).click();
    const row = page.getByRole('table', { name: 'Schedules' }).getByRole('row').filter({ hasText: 'Weekly digest' });
    await row.waitFor();
    expect(await row.getByRole('link', { name: 'Digest writer' }).count()).toBe(1);
    expect(await row.locator('time').first().getAttribute('datetime')).toBe(s.body.next_run_at);
  });
});
