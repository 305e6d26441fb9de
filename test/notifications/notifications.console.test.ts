import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleWorld, type ConsoleWorld } from '../console/browser-harness.js';
import { NotificationReceiver, startReceiver } from '../fakes/notification-receiver.js';

/** The task page's Notifications panel in a real browser: a failed delivery, its attempts, and re-sending it. */
describe('console: task notifications (sqlite)', () => {
  let w: ConsoleWorld;
  let rx: NotificationReceiver;
  beforeAll(async () => {
    w = await startConsoleWorld('sqlite');
    rx = await startReceiver();
  }, 90_000);
  afterAll(async () => {
    await rx?.close();
    await w?.close();
  });

  it('shows each delivery with its attempts and sends a failed one again', { timeout: 60_000 }, async () => {
    rx.handle = () => ({ status: 410, body: 'hook removed' });
    const agent = await w.createAgent({ notification_settings: { on_success: { webhook: [{ url: `${rx.url}/hook` }] } } });
    const invoked = await w.api('POST', `/v1/agents/${agent.id}/invoke/async`, { input: { text: 'Say hello' } });
    const id = invoked.body.id as string;
    await w.waitTask(id, (t) => t.status === 'completed');
    await expect.poll(async () => (await w.api('GET', `/v1/tasks/${id}/notifications`)).body[0]?.status, { timeout: 15_000 }).toBe('failed');

    const page = await w.signedInPage();
    await page.goto(`${w.apiUrl}/#/tasks/${encodeURIComponent(id)}`);
    const panel = page.getByRole('region', { name: 'Notifications' });
    const row = panel.getByRole('row').filter({ hasText: `${rx.url}/hook` });
    await row.waitFor();
    expect(await row.locator('.badge').textContent()).toBe('failed');
    expect(await row.textContent()).toContain('HTTP 410: hook removed');

    rx.handle = () => ({ status: 200 });
    await row.getByRole('button', { name: 'Send the webhook notification again' }).click();
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 15_000 }).toBe('delivered');
    await row.getByText('2', { exact: true }).click();
    expect(await row.locator('details li').allTextContents()).toEqual([expect.stringContaining('failed (HTTP 410)'), expect.stringContaining('delivered (HTTP 200)')]);
    await page.screenshot({ path: '/tmp/notifications-panel.png', fullPage: true });
    expect(w.pageErrors).toEqual([]);
    await page.context().close();
  });
});
