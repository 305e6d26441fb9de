import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TEST_DBS } from '../support/harness.js';
import { startUpstreamApi, type UpstreamApi } from '../fakes/upstream-api.js';
import { consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';
import { PETSTORE } from './petstore.fixture.js';

/** Connectors in a real browser: import a document (file), read an operation's schema, connect, try it. */
describe.each(TEST_DBS)('console connectors (%s)', (kind) => {
  let w: ConsoleWorld;
  let upstream: UpstreamApi;
  let page: Page | undefined;
  consoleWorldPerSuite(kind, (x) => (w = x), { page: () => page });
  beforeAll(async () => {
    upstream = await startUpstreamApi();
  });
  afterAll(async () => upstream?.close());

  it('imports a document, connects with write-only credentials, reads the resolved schema and tries the operation', { timeout: 90_000 }, async () => {
    upstream.on('GET', '/pets/7', (req) => ({ json: { name: 'Rex', species: 'dog', key_seen: req.headers['x-api-key'] === 'pet-key-123' } }));
    page = await w.signedInPage();
    await page.getByRole('link', { name: 'Connectors' }).click();
    await page.getByRole('heading', { name: 'Connectors', level: 1 }).waitFor();

    // A document that is not OpenAPI: the API's 422 shows on the form, and nothing is created.
    const form = page.getByRole('form', { name: 'Import an OpenAPI document' });
    await form.getByLabel('Name', { exact: true }).fill('Broken');
    await form.getByLabel('Document file').setInputFiles({ name: 'nope.json', mimeType: 'application/json', buffer: Buffer.from('{"hello": 1}') });
    await form.getByRole('button', { name: 'Import' }).click();
    await form.getByRole('alert').or(form.locator('.field-error:not([hidden])')).first().waitFor();
    expect((await w.api('GET', '/v1/connectors')).body.total).toBe(0);

    await form.getByLabel('Name', { exact: true }).fill('Pet store');
    await form.getByLabel('Document file').setInputFiles({ name: 'petstore.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(PETSTORE)) });
    await form.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('heading', { name: 'Pet store', level: 1 }).waitFor();
    const ops = page.getByRole('table', { name: 'Operations' });
    await ops.getByRole('row').filter({ hasText: 'getPet' }).waitFor();
    expect(await ops.getByRole('row').count()).toBe(3);
    await page.getByLabel('Search operations').fill('create');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('status').filter({ hasText: '1 operation' }).waitFor();
    await page.getByLabel('Search operations').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('status').filter({ hasText: '2 operations' }).waitFor();

    // The connection's key goes in through a password field and never comes back to the page.
    await page.getByText('New connection').click();
    const conn = page.getByRole('form', { name: 'New connection' });
    await conn.getByLabel('Name', { exact: true }).fill('Local pets');
    await conn.getByLabel('Base URL').fill(upstream.url);
    await conn.getByLabel('Credentials').selectOption('api_key');
    await conn.getByLabel('Parameter name').fill('X-API-Key');
    expect(await conn.getByLabel('API key').getAttribute('type')).toBe('password');
    await conn.getByLabel('API key').fill('pet-key-123');
    await conn.getByRole('button', { name: 'Create connection' }).click();
    const connRow = page.getByRole('table', { name: 'Connections' }).getByRole('row').filter({ hasText: 'Local pets' });
    await connRow.waitFor();
    expect(await connRow.textContent()).toContain('api_key');
    expect(await conn.getByLabel('API key').inputValue()).toBe('');
    expect(await page.content()).not.toContain('pet-key-123');

    await ops.getByRole('link', { name: '/pets/{petId}' }).click();
    const schema = page.getByRole('region', { name: 'Schema' });
    await schema.getByText('Path parameters').waitFor();
    expect(await schema.textContent()).toContain('The pet number');
    // The output's $ref is resolved: the Pet properties are in the schema the page shows.
    await schema.getByText('Output schema (JSON)').click();
    const output = await schema.getByRole('region').or(schema.locator('pre')).last().textContent();
    expect(output).toContain('What the pet answers to');
    expect(output).not.toContain('$ref');

    const tryIt = page.getByRole('form', { name: 'Try the operation' });
    const payload = tryIt.getByLabel(/Request through/);
    expect(JSON.parse(await payload.inputValue())).toEqual({ path_params: { petId: 0 } });
    await payload.fill(JSON.stringify({ path_params: { petId: 'seven' } }));
    await tryIt.getByRole('button', { name: 'Send request' }).click();
    await tryIt.getByRole('alert').waitFor();
    await payload.fill(JSON.stringify({ path_params: { petId: 7 } }));
    await tryIt.getByRole('button', { name: 'Send request' }).click();
    const result = page.locator('.try-result');
    await result.getByText('200', { exact: true }).waitFor();
    expect(await result.textContent()).toContain('"key_seen": true');
    expect(upstream.received('GET', '/pets/7')).toHaveLength(1);
    expect(await page.content()).not.toContain('pet-key-123');
  });

  it('imports a document from a URL the server fetches; a refused URL shows on its field', { timeout: 60_000 }, async () => {
    upstream.on('GET', '/openapi.json', () => ({ json: PETSTORE }));
    page ??= await w.signedInPage();
    await page.goto(`${w.apiUrl}/#/connectors`);
    const form = page.getByRole('form', { name: 'Import an OpenAPI document' });
    await form.getByLabel('Name', { exact: true }).fill('Pets from URL');
    await form.getByLabel('Source').selectOption('url');
    await form.getByLabel('Document URL').fill(`${upstream.url}/missing.json`);
    await form.getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => form.getByLabel('Document URL').getAttribute('aria-invalid')).toBe('true');
    expect(await form.locator('#imp-url-error').textContent()).toContain('HTTP 404');
    await form.getByLabel('Document URL').fill(`${upstream.url}/openapi.json`);
    await form.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('heading', { name: 'Pets from URL', level: 1 }).waitFor();
    await page.getByRole('table', { name: 'Operations' }).getByRole('row').filter({ hasText: 'createPet' }).waitFor();
  });
});
