import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TEST_DBS } from '../support/harness.js';
import { consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';

const eventually = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 100 });

/** Secrets in a real browser: values go in and are never on the page or in any answer the page receives. */
describe.each(TEST_DBS)('console secrets (%s)', (kind) => {
  let w: ConsoleWorld;
  let page: Page | undefined;
  consoleWorldPerSuite(kind, (x) => (w = x), { page: () => page });

  it('stores, replaces and deletes a secret without ever showing its value', { timeout: 60_000 }, async () => {
    const VALUE = 'sk-live-very-secret-0001';
    const REPLACED = 'sk-live-very-secret-0002';
    page = await w.signedInPage();
    const bodies: string[] = [];
    page.on('response', async (r) => {
      if (r.url().includes('/v1/')) bodies.push(await r.text().catch(() => ''));
    });
    await page.getByRole('link', { name: 'Secrets' }).click();
    await page.getByRole('heading', { name: 'Secrets', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'Store a secret' });
    expect(await form.getByLabel('Value').getAttribute('type')).toBe('password');

    // A bad name is refused on its field, and nothing is stored.
    await form.getByLabel('Name').fill('not a name!');
    await form.getByLabel('Value').fill(VALUE);
    await form.getByRole('button', { name: 'Save secret' }).click();
    await eventually(() => form.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect((await w.api('GET', '/v1/secrets')).body.total).toBe(0);

    await form.getByLabel('Name').fill('STRIPE_KEY');
    await form.getByLabel('Description').fill('Payments');
    await form.getByRole('button', { name: 'Save secret' }).click();
    const row = page.getByRole('table', { name: 'Secrets' }).getByRole('row').filter({ hasText: 'STRIPE_KEY' });
    await row.waitFor();
    expect(await row.textContent()).toContain('hidden (write-only)');
    expect(await form.getByLabel('Value').inputValue()).toBe('');

    await row.getByRole('button', { name: 'Replace STRIPE_KEY' }).click();
    expect(await form.getByLabel('Name').inputValue()).toBe('STRIPE_KEY');
    await form.getByLabel('Value').fill(REPLACED);
    await form.getByRole('button', { name: 'Save secret' }).click();
    await eventually(() => form.getByLabel('Value').inputValue()).toBe('');
    // The server holds the new value (what a run would use); the page never had it back.
    expect(await w.server.container.secrets.reveal(await orgOf(w), 'STRIPE_KEY')).toBe(REPLACED);

    const html = await page.content();
    for (const v of [VALUE, REPLACED]) {
      expect(html).not.toContain(v);
      expect(bodies.join('\n')).not.toContain(v);
    }
    const stored = JSON.stringify(await w.server.container.db.kysely.selectFrom('org_secrets').selectAll().execute());
    expect(stored).not.toContain(REPLACED);

    await row.getByRole('button', { name: 'Delete STRIPE_KEY' }).click();
    await page.locator('#confirm-ok').click();
    await page.getByText('No secret yet.').waitFor();
    expect((await w.api('GET', '/v1/secrets')).body.total).toBe(0);
  });

  it("a key whose role refuses an operation stays signed in and sees why; a revoked key signs out", { timeout: 60_000 }, async () => {
    const { key, id } = await w.server.container.orgs.createApiKey('console-org', 'reader', 'read-only');
    const context = await w.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const reader = await context.newPage();
    reader.on('pageerror', (e) => w.pageErrors.push(e.message));
    try {
      await reader.goto(`${w.apiUrl}/`);
      await reader.getByLabel('API key').fill(key);
      await reader.getByRole('button', { name: 'Sign in' }).click();
      await reader.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
      await reader.getByRole('link', { name: 'Secrets' }).click();
      const form = reader.getByRole('form', { name: 'Store a secret' });
      await form.getByLabel('Name').fill('READER_TRIES');
      await form.getByLabel('Value').fill('some-value');
      await form.getByRole('button', { name: 'Save secret' }).click();
      // The role's 403 is this operation's refusal, not the key's: the page says why and the session stays.
      await eventually(() => reader.getByRole('alert').allTextContents()).toContainEqual(expect.stringContaining("role (read-only) does not allow this operation"));
      expect(await reader.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
      expect((await w.api('GET', '/v1/secrets')).body.items.map((x: { name: string }) => x.name)).not.toContain('READER_TRIES');

      // Revoked: the next request is refused as an invalid key, and that one signs out.
      expect((await w.api('DELETE', `/v1/api_keys/${id}`)).status).toBe(200);
      await reader.getByRole('link', { name: 'Agents' }).click();
      await reader.getByRole('button', { name: 'Sign in' }).waitFor();
    } finally {
      await context.close();
    }
  });
});

async function orgOf(w: ConsoleWorld): Promise<string> {
  const agent = await w.createAgent();
  return (await w.api('GET', `/v1/agents/${agent.id}`)).body.organization_id;
}
