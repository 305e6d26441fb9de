import { beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TEST_DBS } from '../support/harness.js';
import { consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';

const eventually = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 30_000, interval: 100 });

/** The tasks page: rows led by the input, server-side text search, the activity chart, and a phone-width screen. */
describe.each(TEST_DBS)('console task search and activity (%s)', (kind) => {
  let w: ConsoleWorld;
  let page: Page | undefined;
  let agent: { id: string; name: string };
  consoleWorldPerSuite(kind, (x) => (w = x), { page: () => page });
  beforeAll(async () => {
    agent = await w.createAgent({ name: 'Helpdesk' });
    const broken = await w.createAgent({ name: 'Broken', llm_api_base: 'http://127.0.0.1:9/v1' });
    for (const text of ['Printer shows error E42 in room 5', 'Where is my invoice for March?', 'Reset the VPN password']) {
      const r = await w.api('POST', `/v1/agents/${agent.id}/invoke`, { input: { text } });
      expect(r.body.status).toBe('completed');
    }
    const failed = await w.api('POST', `/v1/agents/${agent.id}/invoke/async`, { input: { text: 'Escalate the invoice dispute', files: [] } });
    await w.api('POST', `/v1/agents/${broken.id}/invoke/async`, { input: { text: 'Check invoice INV-2041' } });
    await w.waitTask(failed.body.id, (t) => t.status === 'completed', 30_000);
  }, 120_000);

  it('searches inputs and results on the server, rows led by the first words of the input', { timeout: 60_000 }, async () => {
    page = await w.signedInPage();
    await page.goto(`${w.apiUrl}/#/tasks?live=0`);
    const table = page.locator('#task-results table');
    await table.waitFor();
    expect(await table.getByRole('link', { name: 'Printer shows error E42 in room 5' }).count()).toBe(1);

    await page.getByLabel('Search inputs and results').fill('INVOICE');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await eventually(() => page!.url()).toContain('q=INVOICE');
    await eventually(async () => (await table.locator('a.task-lead').allTextContents()).sort()).toEqual(['Check invoice INV-2041', 'Escalate the invoice dispute', 'Where is my invoice for March?']);

    // The answer is searched too: the scripted model echoes the prompt into the result ("Done: *Reset the VPN…*").
    await page.getByLabel('Search inputs and results').fill('done: *reset');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await eventually(() => table.locator('a.task-lead').allTextContents()).toEqual(['Reset the VPN password']);

    await page.getByLabel('Search inputs and results').fill('nothing like this');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText(/contains “nothing like this”/).waitFor();
  });

  it("draws an agent's tasks and failures per day", { timeout: 60_000 }, async () => {
    const broken = (await w.api('GET', '/v1/agents')).body.items.find((a: { name: string }) => a.name === 'Broken');
    await w.waitTask((await w.api('GET', `/v1/tasks?agent_id=${broken.id}`)).body.items[0].id, (t) => ['error', 'failed'].includes(t.status), 60_000);
    page ??= await w.signedInPage();
    await page.goto(`${w.apiUrl}/#/tasks?agent_id=${broken.id}&live=0`);
    const chart = page.getByRole('img', { name: /tasks, .* failed/ });
    await chart.waitFor();
    expect(await chart.getAttribute('aria-label')).toMatch(/^1 tasks, 1 failed, over 14 days/);
    expect(await chart.locator('rect.bar-failed').count()).toBe(1);
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}`);
    const agentChart = page.getByRole('region', { name: 'Activity' }).getByRole('img');
    await agentChart.waitFor();
    expect(await agentChart.getAttribute('aria-label')).toMatch(/^4 tasks, 0 failed/);
    await page.getByLabel('Period').selectOption('7');
    await eventually(() => agentChart.getAttribute('aria-label')).toMatch(/over 7 days/);
  });

  it('fits a 375 px wide screen: no sideways scrolling, rows stacked as cards', { timeout: 60_000 }, async () => {
    const context = await w.browser.newContext({ viewport: { width: 375, height: 740 } });
    const phone = await context.newPage();
    phone.on('pageerror', (e) => w.pageErrors.push(e.message));
    await phone.goto(`${w.apiUrl}/`);
    await phone.getByLabel('API key').fill(w.key);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
    for (const hash of [`#/tasks?agent_id=${agent.id}&live=0`, '#/connectors', '#/knowledge', '#/secrets', `#/agents/${agent.id}`]) {
      await phone.goto(`${w.apiUrl}/${hash}`);
      await phone.locator('h1').first().waitFor();
      await phone.waitForTimeout(300);
      expect(await phone.evaluate(() => document.documentElement.scrollWidth), hash).toBeLessThanOrEqual(375);
    }
    // Between phone and desktop too: the header's links take their own row instead of pushing the page wider.
    await phone.setViewportSize({ width: 900, height: 740 });
    await phone.goto(`${w.apiUrl}/#/connectors`);
    await phone.locator('h1').first().waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(900);
    await phone.setViewportSize({ width: 375, height: 740 });
    await phone.goto(`${w.apiUrl}/#/tasks?live=0`);
    const cell = phone.locator('#task-results td[data-label="Status"]').first();
    await cell.waitFor();
    expect(await cell.evaluate((td) => getComputedStyle(td).display)).toBe('flex');
    await context.close();
  });
});
