/**
 * Takes the workspace pages' screenshots in docs/screenshots/ (connectors, knowledge, secrets, functions, MCP,
 * task search and activity, a phone-width tasks page) from a run against seeded data:
 *
 *   npx tsx test/console/take-resource-screenshots.ts [output-dir]
 *
 * Same world as take-screenshots.ts (a whole Agentry on a temporary embedded database, the scripted LLM), plus a
 * fake upstream API and a fake MCP server. The committed files were reduced to 128-colour palettes (Pillow).
 */
import { startFakeMcpServer } from '../fakes/mcp-server.js';
import { startUpstreamApi } from '../fakes/upstream-api.js';
import { startConsoleWorld } from './browser-harness.js';
import { PETSTORE } from './petstore.fixture.js';
import { camera, screenshotDir, seedBrokenAgent, seedWordCount } from './screenshot-world.js';

const shot = camera(screenshotDir(), 400);
// Most of these pages are photographed whole.
const full = { fullPage: true };

const [w, upstream, mcp] = await Promise.all([startConsoleWorld('sqlite'), startUpstreamApi(), startFakeMcpServer()]);
try {
  upstream.on('GET', '/pets/7', () => ({ json: { name: 'Rex', species: 'dog' } }));
  const connector = (await w.api('POST', '/v1/connectors', { name: 'Pet store', description: 'The pet shop’s inventory API', openapi: PETSTORE })).body;
  const connection = (await w.api('POST', `/v1/connectors/${connector.id}/connect`, { name: 'Production', base_url: upstream.url, security: { type: 'bearer', token: 'tok-123' } })).body;
  const getPet = (await w.api('GET', `/v1/tools/connectors/${connector.id}/operations`)).body.find((o: { operationId: string }) => o.operationId === 'getPet');
  const kb = (await w.api('POST', '/v1/knowledge', { name: 'Support handbook', description: 'Policies and fixes support agents rely on' })).body;
  const fd = new FormData();
  fd.append('files', new Blob(['Refund policy. Customers may return hardware within 30 days of delivery for a full refund.\n\nPrinter errors. Error E42 means the paper tray is jammed: open tray 2 and remove the sheet.\n\nShipping. Orders leave the warehouse in Rotterdam within two working days.'], { type: 'text/plain' }), 'handbook.txt');
  fd.append('files', new Blob(['Warranty. Printers carry a two-year warranty; the tray mechanism is covered.'], { type: 'text/plain' }), 'warranty.txt');
  await fetch(`${w.apiUrl}/v1/knowledge/${kb.id}/documents`, { method: 'POST', headers: { 'x-api-key': w.key }, body: fd });
  await w.api('PUT', '/v1/secrets/STRIPE_KEY', { value: 'sk-live-1', description: 'Payments (production)' });
  await w.api('PUT', '/v1/secrets/SLACK_WEBHOOK', { value: 'https://hooks.example', description: 'Alerts channel' });
  // The function editor shows a body on several lines.
  const fn = await seedWordCount(w, 'async function run({ text }) {\n  const words = text.split(/\\s+/).filter(Boolean);\n  return { words: words.length };\n}');
  const server = (await w.api('POST', '/v1/mcp_servers', { name: 'Calculator', url: mcp.mcpUrl, allowed_tools: ['add', 'echo'] })).body;

  const agent = await w.createAgent({ name: 'Support triage', icon: '🛟', knowledge_bases: [{ id: kb.id, strategy: 'vanilla' }] });
  const broken = await seedBrokenAgent(w);
  for (const text of ['My printer shows error E42 and will not print', 'Where can I download last month’s invoice?', 'The invoice total does not match the order', 'Reset my VPN password please']) {
    await w.api('POST', `/v1/agents/${agent.id}/invoke`, { input: { text } });
  }
  const failed = (await w.api('POST', `/v1/agents/${broken.id}/invoke/async`, { input: { text: 'Check invoice INV-2041 against PO-77' } })).body;
  await w.waitTask(failed.id, (t) => ['error', 'failed'].includes(t.status), 60_000);

  const page = await w.signedInPage({ viewport: { width: 1200, height: 820 } });

  await page.goto(`${w.apiUrl}/#/connectors/${connector.id}`);
  await page.getByRole('table', { name: 'Operations' }).waitFor();
  await shot(page, 'connector', full);
  await page.goto(`${w.apiUrl}/#/connectors/${connector.id}/operations/${getPet.id}?connection=${connection.id}`);
  await page.getByText('Path parameters').waitFor();
  const tryIt = page.getByRole('form', { name: 'Try the operation' });
  await tryIt.getByLabel(/Request through/).fill('{\n  "path_params": { "petId": 7 }\n}');
  await tryIt.getByRole('button', { name: 'Send request' }).click();
  await page.locator('.try-result').getByText('200', { exact: true }).waitFor();
  await shot(page, 'connector-operation', full);

  await page.goto(`${w.apiUrl}/#/knowledge/${kb.id}`);
  await page.getByRole('table', { name: /Documents of/ }).getByText('ready').first().waitFor({ timeout: 30_000 });
  await page.getByLabel('Search text').fill('printer tray jammed');
  await page.getByRole('form', { name: 'Search the knowledge base' }).getByRole('button', { name: 'Search' }).click();
  await page.getByRole('list', { name: 'Ranked passages' }).waitFor();
  await shot(page, 'knowledge-search', full);

  await page.goto(`${w.apiUrl}/#/secrets`);
  await page.getByRole('table', { name: 'Secrets' }).waitFor();
  await shot(page, 'secrets');

  await page.goto(`${w.apiUrl}/#/functions/${fn.id}`);
  await page.getByRole('form', { name: 'Test run' }).getByLabel('Arguments (JSON)').fill('{ "text": "one two three four" }');
  await page.getByRole('form', { name: 'Test run' }).getByRole('button', { name: 'Run' }).click();
  await page.locator('.try-result').getByText('"words": 4').waitFor();
  await shot(page, 'function-editor', full);

  await page.goto(`${w.apiUrl}/#/mcp/${server.id}`);
  await page.getByRole('table', { name: 'Tools of Calculator' }).waitFor();
  await shot(page, 'mcp-server', full);

  await page.goto(`${w.apiUrl}/#/tasks?agent_id=${agent.id}&q=invoice&live=0`);
  await page.getByRole('img', { name: /tasks,/ }).waitFor();
  await page.locator('#task-results table').waitFor();
  await shot(page, 'tasks-search', full);
  await page.context().close();

  const phone = await w.signedInPage({ viewport: { width: 375, height: 812 }, deviceScaleFactor: 1 });
  await phone.goto(`${w.apiUrl}/#/tasks?live=0`);
  await phone.locator('#task-results table').waitFor();
  await shot(phone, 'tasks-phone');
  await phone.context().close();
} finally {
  await w.close();
  await upstream.close();
  await mcp.close();
}
