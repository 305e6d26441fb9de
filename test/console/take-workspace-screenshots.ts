/**
 * Takes the screenshots of the agent workspace in docs/screenshots/ (the playground, the editor with a refused
 * field, the draft diff) from a run against seeded data:
 *
 *   npx tsx test/console/take-workspace-screenshots.ts [output-dir]
 *
 * Same world as take-screenshots.ts: a whole Agentry on a temporary embedded database with the scripted LLM.
 */
import { startConsoleWorld } from './browser-harness.js';
import { camera, screenshotDir, seedTriage } from './screenshot-world.js';

const shot = camera(screenshotDir(), 300);

const w = await startConsoleWorld('sqlite');
try {
  const agent = await seedTriage(w);
  const page = await w.signedInPage({ viewport: { width: 1280, height: 860 } });

  // The playground: a conversation with a tool call, the trace beside it, a follow-up in the same thread.
  await page.goto(`${w.apiUrl}/#/agents/${agent.id}/playground`);
  await page.getByLabel('Message').fill('My printer shows error E42 and will not print. How many words is that?');
  await page.setInputFiles('#playground-files', { name: 'ticket-4711.txt', mimeType: 'text/plain', buffer: Buffer.from('Customer: ACME. Printer model LX-200.') });
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.bubble.role-assistant strong').waitFor();
  await page.getByLabel('Message').fill('Thanks, draft the answer now.');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.bubble.role-assistant').nth(1).locator('em').waitFor();
  await page.locator('.entry.kind-tool').getByText('Arguments').click();
  await page.locator('.entry.kind-tool').getByText('Result').click();
  await shot(page, 'playground');

  // The editor with the API's 422 on the field it names.
  await page.goto(`${w.apiUrl}/#/agents/${agent.id}/edit`);
  await page.getByLabel('General instructions').fill('Never promise refunds. Answer in the customer\u2019s language.');
  await page.getByLabel('API base URL').fill('not a url');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.locator('#field-llm_api_base-error').waitFor();
  await page.locator('#group-llm').scrollIntoViewIfNeeded();
  await shot(page, 'agent-editor');

  // The draft's diff against the deployed version, with deploy and roll back.
  await page.getByLabel('API base URL').fill(w.llm.baseUrl);
  await page.getByLabel('Runs of history in context').fill('4');
  await page.getByRole('button', { name: 'Save draft' }).click();
  const panel = page.getByRole('region', { name: 'Draft and deployment' });
  await panel.getByRole('table').waitFor();
  await shot(panel, 'agent-draft');
  await page.context().close();
} finally {
  await w.close();
}
