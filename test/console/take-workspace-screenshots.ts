/**
 * Takes the screenshots of the agent workspace in docs/screenshots/ (the playground, the editor with a refused
 * field, the draft diff) from a run against seeded data:
 *
 *   npx tsx test/console/take-workspace-screenshots.ts [output-dir]
 *
 * Same world as take-screenshots.ts: a whole Agentry on a temporary embedded database with the scripted LLM.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { startConsoleWorld } from './browser-harness.js';

const out = resolve(process.argv[2] ?? 'docs/screenshots');
mkdirSync(out, { recursive: true });

const w = await startConsoleWorld('sqlite');
try {
  const fn = await w.api('POST', '/v1/custom_functions', {
    name: 'word_count',
    description: 'Counts the words of a text',
    code: 'async function run({ text }) { return { words: text.split(/\\s+/).filter(Boolean).length }; }',
    input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  });
  const agent = await w.createAgent({
    name: 'Support triage',
    icon: '🛟',
    description: 'Reads incoming tickets, counts what matters and drafts a first answer.',
    instructions: { role: ['You triage customer support tickets'], goal: ['Draft a short, friendly first answer'], general: 'Never promise refunds.' },
    tools: [{ type: 'custom_function', custom_function_id: fn.body.id }],
  });
  w.model.when('printer', '[tool:word_count]');

  const shot = async (target: Page | Locator, name: string, opts: { fullPage?: boolean } = {}) => {
    const page = 'page' in target ? target.page() : target;
    await page.waitForTimeout(300);
    if ('page' in target) await target.screenshot({ path: `${out}/${name}.png` });
    else await target.screenshot({ path: `${out}/${name}.png`, fullPage: opts.fullPage ?? false });
    console.log(`${out}/${name}.png`);
  };
  const context = await w.browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  await page.goto(`${w.apiUrl}/`);
  await page.getByLabel('API key').fill(w.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();

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
  await context.close();
} finally {
  await w.close();
}
