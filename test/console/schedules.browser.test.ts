import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TEST_DBS } from '../support/harness.js';
import { consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';

const eventually = <T>(fn: () => T | Promise<T>, opts: { timeout?: number } = {}) => expect.poll(fn, { timeout: 20_000, interval: 100, ...opts });

/** The agent page's schedules panel in a real browser, against a running Agentry whose scheduler fires a one-off. */
describe.each(TEST_DBS)('console schedules panel (%s)', (kind) => {
  let w: ConsoleWorld;
  let page: Page | undefined;
  consoleWorldPerSuite(kind, (x) => (w = x), { page: () => page });

  it("shows an agent's schedules, their next run, and the tasks one started", { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Scheduled agent' });
    const hourly = await w.api('POST', `/v1/agents/${agent.id}/schedules`, { name: 'Hourly digest', interval_seconds: 3600, invocation: { input: { text: 'digest' } } });
    expect(hourly.status).toBe(201);
    const soon = await w.api('POST', `/v1/agents/${agent.id}/schedules`, { name: 'Soon', run_at: new Date(Date.now() + 2000).toISOString(), invocation: { input: { text: 'one-off run' } } });
    expect(soon.status).toBe(201);

    page = await w.signedInPage();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}`);
    const panel = page.getByRole('region', { name: 'Schedules' });
    const hourlyRow = panel.getByRole('row').filter({ hasText: 'Hourly digest' });
    await hourlyRow.waitFor();
    expect(await hourlyRow.textContent()).toContain('every hour');
    expect(await hourlyRow.locator('.badge').textContent()).toBe('active');
    expect(await hourlyRow.locator('time').first().getAttribute('datetime')).toBe(hourly.body.next_run_at);

    // The one-off fires while the page is open: the panel follows (finished, one run), and lists its task.
    const soonRow = panel.getByRole('row').filter({ hasText: 'Soon' });
    await eventually(() => soonRow.locator('.badge').textContent()).toBe('finished');
    expect(await soonRow.textContent()).toContain('Task started');
    await soonRow.getByText('1 run').click();
    const taskRow = soonRow.getByRole('row').filter({ hasText: 'one-off run' });
    await taskRow.waitFor();
    expect(await taskRow.textContent()).toContain('schedule');
  });
});
