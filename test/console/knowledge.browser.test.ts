import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TEST_DBS } from '../support/harness.js';
import { consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';

const eventually = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 30_000, interval: 200 });

const HANDBOOK = [
  'Refund policy. Customers may return hardware within 30 days of delivery for a full refund.',
  '',
  'Shipping. Orders leave the warehouse in Rotterdam within two working days.',
  '',
  'Printer errors. Error E42 means the paper tray is jammed: open tray 2 and remove the sheet.',
].join('\n');

/** Knowledge bases in a real browser: create, upload, watch the indexing, search; the agent page names the base. */
describe.each(TEST_DBS)('console knowledge bases (%s)', (kind) => {
  let w: ConsoleWorld;
  let page: Page | undefined;
  consoleWorldPerSuite(kind, (x) => (w = x), { page: () => page });

  it('creates a base, uploads a document, follows its indexing and shows ranked passages', { timeout: 90_000 }, async () => {
    page = await w.signedInPage();
    await page.getByRole('link', { name: 'Knowledge' }).click();
    await page.getByRole('heading', { name: 'Knowledge bases', level: 1 }).waitFor();
    await page.getByText('New knowledge base').click();
    const create = page.getByRole('form', { name: 'New knowledge base' });
    // An empty name is the API's 422, shown on the field.
    await create.getByRole('button', { name: 'Create knowledge base' }).click();
    await eventually(() => create.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect((await w.api('GET', '/v1/knowledge')).body.total).toBe(0);
    await create.getByLabel('Name').fill('Support handbook');
    await create.getByLabel('Description').fill('What support agents need to know');
    await create.getByRole('button', { name: 'Create knowledge base' }).click();
    await page.getByRole('heading', { name: 'Support handbook', level: 1 }).waitFor();

    const add = page.getByRole('form', { name: 'Add documents' });
    await add.getByLabel('Files').setInputFiles([{ name: 'handbook.txt', mimeType: 'text/plain', buffer: Buffer.from(HANDBOOK) }]);
    await add.getByRole('button', { name: 'Add' }).click();
    const row = page.getByRole('table', { name: 'Documents of Support handbook' }).getByRole('row').filter({ hasText: 'handbook.txt' });
    await row.waitFor();
    // The table follows the indexer without a reload.
    await eventually(() => row.locator('.badge').textContent()).toBe('ready');
    expect(Number(await row.locator('td.num').textContent())).toBeGreaterThan(0);

    const search = page.getByRole('form', { name: 'Search the knowledge base' });
    await search.getByLabel('Search text').fill('paper tray jammed E42');
    await search.getByRole('button', { name: 'Search' }).click();
    const passages = page.getByRole('list', { name: 'Ranked passages' }).getByRole('listitem');
    await passages.first().waitFor();
    const first = await passages.first().textContent();
    expect(first).toContain('#1');
    expect(first).toContain('open tray 2');
    expect(first).toContain('handbook.txt');
    await search.getByLabel('Search text').fill('');
    await search.getByRole('button', { name: 'Search' }).click();
    await eventually(() => search.getByLabel('Search text').getAttribute('aria-invalid')).toBe('true');
  });

  it("shows an agent's knowledge base by name, linked to its page", { timeout: 60_000 }, async () => {
    const kb = (await w.api('POST', '/v1/knowledge', { name: 'Price list' })).body;
    const agent = await w.createAgent({ knowledge_bases: [{ id: kb.id, strategy: 'vanilla' }] });
    page ??= await w.signedInPage();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}`);
    const link = page.getByRole('region', { name: 'Configuration' }).getByRole('link', { name: 'Price list' });
    await link.waitFor();
    await link.click();
    await page.getByRole('heading', { name: 'Price list', level: 1 }).waitFor();
  });
});
