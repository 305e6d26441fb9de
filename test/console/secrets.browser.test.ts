import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TEST_DBS } from '../support/harness.js';
import { endConsoleWorld, startConsoleWorld, type ConsoleWorld } from './browser-harness.js';

const eventually = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 100 });

/** Secrets in a real browser: values go in and are never on the page or in any answer the page receives. */
describe.each(TEST_DBS)('console secrets (%s)', (kind) => {
  let w: ConsoleWorld;
  let page: Page | undefined;
  beforeAll(async () => {
    w = await startConsoleWorld(kind);
  }, 90_000);
  afterAll(async () => {
    await endConsoleWorld(w, page);
  });

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
});

async function orgOf(w: ConsoleWorld): Promise<string> {
  const agent = await w.createAgent();
  return (await w.api('GET', `/v1/agents/${agent.id}`)).body.organization_id;
}
