/**
 * Takes the screenshots in docs/screenshots/ from a run against seeded data:
 *
 *   npx tsx test/console/take-screenshots.ts [output-dir]
 *
 * Starts a whole Agentry on a temporary embedded database with the scripted LLM, seeds agents and tasks (a
 * webhook run with a tool call, a failed run, a stopped run, one still running), and photographs the main pages.
 * The committed files were then reduced to 128-colour palettes (Pillow: `Image.quantize(128)`), a third the size.
 */
import { reachable, startConsoleWorld } from './browser-harness.js';
import { camera, screenshotDir, seedBrokenAgent, seedTriage } from './screenshot-world.js';

const shot = camera(screenshotDir(), 300);

const w = await startConsoleWorld('sqlite');
try {
  const triage = await seedTriage(w);
  await w.createAgent({ name: 'Release notes writer', icon: '📝', description: 'Turns merged pull requests into release notes.' });
  const broken = await seedBrokenAgent(w, { icon: '🧾', description: 'Checks invoices against purchase orders.' });
  const channel = await w.api('POST', `/v1/agents/${triage.id}/webhook`);

  w.model.when('whole year', '[hang]');
  w.model.when('weekly digest', '[gate:digest]');
  const hook = (prompt: string, extra: Record<string, unknown> = {}) =>
    fetch(reachable(channel.body.url, w.server), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt, ...extra }) });
  await hook('My printer shows error E42 and will not print', { ticket_id: 4711, customer: 'ACME' });
  await hook('Where can I download last month\u2019s invoice?');
  const failed = await w.api('POST', `/v1/agents/${broken.id}/invoke/async`, { input: { text: 'Check invoice INV-2041' } });
  const stopped = await w.api('POST', `/v1/agents/${triage.id}/invoke/async`, { input: { text: 'Summarise every ticket of the whole year' } });
  await w.waitTask(stopped.body.id, (t) => t.status === 'executing');
  await w.api('POST', `/v1/tasks/${stopped.body.id}/stop`);
  await w.waitTask(failed.body.id, (t) => ['error', 'failed'].includes(t.status), 60_000);
  const running = await w.api('POST', `/v1/agents/${triage.id}/invoke/async`, { input: { text: 'Draft the weekly digest' } });
  await w.waitTask(running.body.id, (t) => t.status === 'executing');
  const tasks = (await w.api('GET', `/v1/tasks?agent_id=${triage.id}&source=webhook`)).body.items;
  const toolTask = tasks.find((t: { input: { text: string } }) => t.input.text.includes('printer'));
  await w.waitTask(toolTask.id, (t) => t.status === 'completed');

  const context = await w.browser.newContext({ viewport: { width: 1200, height: 820 } });
  const page = await context.newPage();
  await page.goto(`${w.apiUrl}/`);
  await page.getByLabel('API key').waitFor();
  await shot(page, 'sign-in');
  await page.getByLabel('API key').fill(w.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
  await shot(page, 'agents');
  await page.goto(`${w.apiUrl}/#/agents/${triage.id}`);
  await page.getByRole('table', { name: /Latest tasks/ }).waitFor();
  await shot(page, 'agent', { fullPage: true });
  await page.goto(`${w.apiUrl}/#/tasks`);
  await page.locator('#task-results table').waitFor();
  await shot(page, 'tasks');
  await page.goto(`${w.apiUrl}/#/tasks/${encodeURIComponent(toolTask.id)}`);
  await page.locator('.entry.kind-tool').waitFor();
  await page.locator('.entry.kind-tool').getByText('Arguments').click();
  await page.locator('.entry.kind-tool').getByText('Result').click();
  await shot(page, 'task-trace', { fullPage: true });
  await page.goto(`${w.apiUrl}/#/tasks/${encodeURIComponent(running.body.id)}`);
  await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
  // The whole page: the live trace sits below the summary, result and notifications.
  await shot(page, 'task-running', { fullPage: true });
  await page.goto(`${w.apiUrl}/#/tasks/${encodeURIComponent(failed.body.id)}`);
  await page.locator('.entry.failed').first().waitFor();
  await shot(page, 'task-error', { fullPage: true });
  await context.close();
} finally {
  await w.close();
}
