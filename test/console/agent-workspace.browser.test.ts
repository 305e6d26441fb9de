import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { TEST_DBS } from '../support/harness.js';
import { pagesPerTest, consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';

/**
 * The console as a workspace, in Chromium against a whole running Agentry and the scripted OpenAI server: create an
 * agent in the editor, chat with it in the playground (streamed, trace beside, a file attached, the thread
 * continued), see the API's 422 on the offending field, edit a draft, read its diff, deploy and roll back.
 */
const eventually = <T>(fn: () => T | Promise<T>, opts: { timeout?: number } = {}) => expect.poll(fn, { timeout: 20_000, interval: 100, ...opts });

/** Visible controls without an accessible name (a label, aria-label(ledby) or text). */
const unnamedControls = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea, button, a[href]')]
      .filter((el) => (el as HTMLElement).offsetParent !== null)
      .filter((el) => !((el as HTMLInputElement).labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || (el.textContent ?? '').trim()))
      .map((el) => el.outerHTML.slice(0, 80)),
  );

describe.each(TEST_DBS)('console agent workspace (%s)', (kind) => {
  let w: ConsoleWorld;
  const { open } = pagesPerTest(() => w);
  consoleWorldPerSuite(kind, (x) => (w = x));

  it('creates an agent in the editor, chats with it in the playground with a file, sees the trace, continues the thread', { timeout: 90_000 }, async () => {
    const page = await open();
    await page.getByRole('link', { name: 'New agent' }).click();
    await page.getByRole('heading', { name: 'New agent', level: 1 }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Playground helper');
    await page.getByLabel('Description').fill('Answers questions in the playground');
    await page.getByLabel('Provider').selectOption('openai');
    await page.getByLabel('Model', { exact: true }).fill('gpt-test');
    await page.getByLabel('API base URL').fill(w.llm.baseUrl);
    await page.getByLabel('API key', { exact: true }).fill('sk-test');
    await page.getByLabel('Role').fill('You answer briefly\nYou are kind');
    await page.getByLabel('General instructions').fill('Cite the attachment when there is one.');
    await page.getByRole('button', { name: 'Create agent' }).click();

    await page.getByRole('heading', { name: /Playground helper/, level: 1 }).waitFor();
    const created = (await w.api('GET', '/v1/agents?per_page=50')).body.items.find((a: { name: string }) => a.name === 'Playground helper');
    const agent = (await w.api('GET', `/v1/agents/${created.id}`)).body;
    expect(agent).toMatchObject({ model_provider: 'openai', model_name: 'gpt-test', llm_api_base: w.llm.baseUrl, description: 'Answers questions in the playground', version: 2 });
    expect(agent.instructions).toEqual({ role: ['You answer briefly', 'You are kind'], goal: [], general: 'Cite the attachment when there is one.' });
    expect(agent.llm_credentials.value).toBe('********');

    await page.getByRole('link', { name: 'Open playground' }).click();
    await page.getByRole('heading', { name: /Playground/, level: 1 }).waitFor();
    expect(await unnamedControls(page)).toEqual([]);
    await page.getByLabel('Message').fill('What does the note say? [gate:pg1]');
    await page.setInputFiles('#playground-files', { name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('The launch code is kiwi-42.') });
    await page.getByRole('button', { name: 'Send' }).click();

    // While the model is held at the gate the run is live: the agent's bubble waits, the trace already has the task.
    const log = page.getByRole('list', { name: 'Chat log' });
    await log.getByText('note.txt').waitFor();
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    const trace = page.getByRole('region', { name: 'Trace' });
    await eventually(() => trace.locator('.entry-title').allTextContents()).toContain('Task created');
    w.model.gate('pg1').open();
    const answers = log.locator('.bubble.role-assistant');
    await eventually(() => answers.first().getAttribute('aria-busy')).toBeNull();
    expect(await answers.first().textContent()).toContain('What does the note say?');
    await eventually(() => trace.locator('.entry-title').allTextContents()).toEqual(expect.arrayContaining(['LLM call · openai/gpt-test', 'Task completed']));
    expect(JSON.stringify(w.llm.requests.at(-1)!.body.messages)).toContain('The launch code is kiwi-42.');

    // The address now names the conversation; the next message continues the same task.
    const taskId = new URL(page.url()).hash.match(/task=([^&]+)/)![1]!;
    const link = page.getByRole('link', { name: 'Open the task' });
    expect(await link.getAttribute('href')).toBe(`#/tasks/${taskId}`);
    await page.getByLabel('Message').fill('And a follow-up');
    await page.getByLabel('Message').press('Control+Enter');
    await eventually(() => answers.count()).toBe(2);
    await eventually(() => answers.nth(1).locator('em').textContent()).toBe('And a follow-up'); // rendered Markdown
    const history = JSON.stringify(w.llm.requests.at(-1)!.body.messages);
    expect(history).toContain('What does the note say?');
    const task = await w.waitTask(decodeURIComponent(taskId), (t) => t.status === 'completed');
    expect(task.agent_id).toBe(agent.id);
    expect((await w.api('GET', `/v1/agents/${agent.id}/tasks`)).body.total).toBe(1);

    // A reload reopens the conversation from the thread and the stored trace.
    await page.reload();
    await eventually(() => page.getByRole('list', { name: 'Chat log' }).locator('.bubble').count()).toBe(4);
    await eventually(() => page.getByRole('region', { name: 'Trace' }).locator('.entry.kind-llm').count()).toBe(2);

    // From the task page, the conversation goes on in the playground.
    await page.getByRole('link', { name: 'Open the task' }).click();
    await page.getByRole('link', { name: 'Continue in playground' }).click();
    await page.getByRole('heading', { name: /Playground/, level: 1 }).waitFor();
    await eventually(() => page.getByRole('list', { name: 'Chat log' }).locator('.bubble').count()).toBe(4);
  });

  it("shows the API's 422 on the offending fields and creates nothing", { timeout: 60_000 }, async () => {
    const before = (await w.api('GET', '/v1/agents?per_page=50')).body.total;
    const page = await open();
    await page.goto(`${w.apiUrl}/#/agents/new`);
    await page.getByLabel('Name', { exact: true }).fill('Never created');
    await page.getByLabel('API base URL').fill('not a url');
    await page.getByLabel('Most self-schedules').fill('5000');
    await page.getByRole('button', { name: 'Create agent' }).click();

    await page.getByRole('alert').filter({ hasText: 'The agent was not saved: 2 problems.' }).waitFor();
    const base = page.getByLabel('API base URL');
    expect(await base.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#field-llm_api_base-error').textContent()).toMatch(/url/i);
    const max = page.getByLabel('Most self-schedules');
    expect(await max.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#field-max_self_schedules-error').textContent()).toMatch(/1000/);
    // The message is announced with the field (aria-describedby), and focus went to the first field in error.
    expect(await base.getAttribute('aria-describedby')).toContain('field-llm_api_base-error');
    await eventually(() => page.evaluate(() => document.activeElement?.id)).toBe('field-llm_api_base');
    // A JSON field that does not parse is refused on the field before anything is sent.
    await page.getByLabel('API base URL').fill('');
    await page.getByLabel('Most self-schedules').fill('3');
    await page.getByLabel(/Output schema/).fill('{ not json');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await eventually(() => page.locator('#field-output_schema-error').textContent()).toContain('Not valid JSON');
    expect(await base.getAttribute('aria-invalid')).toBeNull();
    // An issue inside a list lands on the list, naming the row: a tool that does not exist.
    await page.getByLabel(/Output schema/).fill('');
    await page.getByRole('button', { name: 'Add a tool' }).click();
    await page.getByLabel('Id of new tool 1').fill('no-such-function');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const tools = page.locator('#field-tools');
    expect(await tools.getAttribute('aria-labelledby')).toBe('field-tools-label');
    await eventually(() => tools.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#field-tools-error').textContent()).toBe("0.custom_function_id: Value error, custom function 'no-such-function' not found");
    expect((await w.api('GET', '/v1/agents?per_page=50')).body.total).toBe(before);
  });

  it('edits to a draft, shows its diff, deploys it, runs a picked version, and rolls back', { timeout: 90_000 }, async () => {
    const agent = await w.createAgent({ name: 'Versioned agent', instructions: { role: [], goal: [], general: 'Answer in English.' } });
    const page = await open();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}`);
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit Versioned agent', level: 1 }).waitFor();
    await page.getByLabel('General instructions').fill('Answer in French.');
    await page.getByLabel('Runs of history in context').fill('4');
    await page.getByRole('button', { name: 'Save draft' }).click();

    const panel = page.getByRole('region', { name: 'Draft and deployment' });
    const diff = panel.getByRole('table', { name: /Draft changes against version 2/ });
    await diff.waitFor();
    expect(await diff.locator('tbody th').allTextContents()).toEqual(['instructions.general', 'agno_settings.num_history_runs']);
    const row = diff.locator('tr[data-key="instructions.general"]');
    expect(await row.locator('.diff-before').textContent()).toContain('Answer in English.');
    expect(await row.locator('.diff-after').textContent()).toContain('Answer in French.');
    // Staged, not running: the deployed version still has the old text.
    expect((await w.api('GET', `/v1/agents/${agent.id}/versions/2`)).body.instructions.general).toBe('Answer in English.');

    await panel.getByRole('button', { name: 'Deploy draft' }).click();
    await eventually(() => page.getByRole('region', { name: 'Draft and deployment' }).textContent()).toContain('version 3 is deployed');
    const v3 = (await w.api('GET', `/v1/agents/${agent.id}`)).body;
    expect(v3).toMatchObject({ version: 3, has_pending_changes: false });
    expect(v3.instructions.general).toBe('Answer in French.');
    expect(v3.agno_settings.num_history_runs).toBe(4);

    // The playground runs the version picked: version 2 still answers with version 2's instructions.
    await page.getByRole('link', { name: 'Open playground' }).click();
    await page.getByLabel('Version').selectOption('2');
    await page.getByLabel('Message').fill('Hello there');
    await page.getByRole('button', { name: 'Send' }).click();
    await eventually(() => page.locator('.bubble.role-assistant').first().textContent()).toContain('Done: Hello there');
    expect(JSON.stringify(w.llm.requests.at(-1)!.body.messages)).toContain('Answer in English.');
    const taskId = decodeURIComponent(new URL(page.url()).hash.match(/task=([^&]+)/)![1]!);
    expect((await w.api('GET', `/v1/tasks/${encodeURIComponent(taskId)}`)).body.agent_version).toBe(2);

    await page.goto(`${w.apiUrl}/#/agents/${agent.id}`);
    const again = page.getByRole('region', { name: 'Draft and deployment' });
    await again.getByLabel('Version').selectOption('2');
    await again.getByRole('button', { name: 'Roll back' }).click();
    await page.getByRole('dialog', { name: 'Roll back to version 2?' }).getByRole('button', { name: 'Roll back' }).click();
    await eventually(() => page.getByRole('region', { name: 'Draft and deployment' }).textContent()).toContain('version 4 is deployed');
    const v4 = (await w.api('GET', `/v1/agents/${agent.id}`)).body;
    expect(v4).toMatchObject({ version: 4, has_pending_changes: false });
    expect(v4.instructions.general).toBe('Answer in English.');
    expect(v4.agno_settings.num_history_runs).toBe(10);
  });

  it('attaches a custom function and a knowledge base in the editor, then detaches the tool', { timeout: 60_000 }, async () => {
    const fn = await w.api('POST', '/v1/custom_functions', {
      name: 'shout',
      description: 'Upper-cases a text',
      code: 'async function run({ text }) { return { text: String(text).toUpperCase() }; }',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    expect(fn.status, JSON.stringify(fn.body)).toBe(201);
    const kb = await w.api('POST', '/v1/knowledge', { name: 'Handbook' });
    expect(kb.status, JSON.stringify(kb.body)).toBe(201);
    const agent = await w.createAgent({ name: 'Tooled agent' });
    const page = await open();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}/edit`);
    await page.getByRole('heading', { name: 'Edit Tooled agent', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Add a tool' }).click();
    await page.getByLabel('Type of new tool 1').selectOption('custom_function');
    await page.getByLabel('Id of new tool 1').fill(fn.body.id);
    await page.getByRole('button', { name: 'Add a knowledge base' }).click();
    await page.getByLabel('Knowledge base 1', { exact: true }).fill(kb.body.id);
    await page.getByLabel('Strategy of knowledge base 1').selectOption('agentic_rag');
    expect(await unnamedControls(page)).toEqual([]);
    await page.getByRole('button', { name: 'Save and deploy' }).click();
    await page.getByRole('heading', { name: /Tooled agent/, level: 1 }).waitFor();
    await eventually(async () => (await w.api('GET', `/v1/agents/${agent.id}`)).body.version).toBe(3);
    const v3 = (await w.api('GET', `/v1/agents/${agent.id}`)).body;
    expect(v3.tools).toEqual([{ type: 'custom_function', custom_function_id: fn.body.id }]);
    expect(v3.graph.map((g: { item_id: string }) => g.item_id)).toContain(fn.body.id);
    expect(v3.knowledge_bases).toEqual([expect.objectContaining({ id: kb.body.id, strategy: 'agentic_rag', rw: false })]);

    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('button', { name: 'Remove tool custom_function ' + fn.body.id }).click();
    await page.getByRole('button', { name: 'Save and deploy' }).click();
    await eventually(async () => (await w.api('GET', `/v1/agents/${agent.id}`)).body.version).toBe(4);
    const v4 = (await w.api('GET', `/v1/agents/${agent.id}`)).body;
    expect(v4.tools).toEqual([]);
    expect(v4.graph.map((g: { item_id: string }) => g.item_id)).not.toContain(fn.body.id);
    // The knowledge base stays: only what changed was sent.
    expect(v4.knowledge_bases).toEqual([expect.objectContaining({ id: kb.body.id, strategy: 'agentic_rag' })]);
  });

  it('stops a running conversation turn from the playground', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Slow agent' });
    const page = await open();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}/playground`);
    await page.getByLabel('Message').fill('A very long job [hang]');
    await page.getByRole('button', { name: 'Send' }).click();
    const stop = page.getByRole('button', { name: 'Stop' });
    await stop.waitFor();
    await eventually(async () => (await w.api('GET', `/v1/agents/${agent.id}/tasks`)).body.items[0]?.status).toBe('executing');
    await stop.click();
    const answer = page.locator('.bubble.role-assistant');
    await eventually(() => answer.locator('.badge').textContent()).toBe('stopped');
    expect(await stop.isHidden()).toBe(true);
    expect(await page.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
  });

  it('asks for approval in the playground when a supervised agent calls a tool that changes something', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Supervised agent', is_supervised: true, can_self_schedule: true });
    w.model.argsFor('schedule_self_run', { prompt: 'Remind me tomorrow', run_at: new Date(Date.now() + 86_400_000).toISOString() });
    const page = await open();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}/playground`);
    await page.getByLabel('Message').fill('Remind me tomorrow [tool:schedule_self_run]');
    await page.getByRole('button', { name: 'Send' }).click();
    const approval = page.getByRole('group', { name: 'Approval needed' });
    await approval.waitFor();
    expect(await approval.textContent()).toContain('The agent wants to call schedule_self_run.');
    expect(await approval.locator('pre').textContent()).toContain('Remind me tomorrow');
    await approval.getByRole('button', { name: 'Reject' }).click();
    await approval.waitFor({ state: 'detached' });
    // Rejected: the tool did not run (no schedule), and the run went on to its answer.
    await eventually(() => page.locator('.bubble.role-assistant').getAttribute('aria-busy')).toBeNull();
    const schedules = await w.api('GET', `/v1/agents/${agent.id}/schedules`);
    expect(schedules.status).toBe(200);
    expect(schedules.body.total).toBe(0);
    const taskId = new URL(page.url()).hash.match(/task=([^&]+)/)![1]!;
    const events = (await w.api('GET', `/v1/tasks/${taskId}/events`)).body as { type: string; data: { hitl_decision?: string } }[];
    expect(events.filter((e) => e.data.hitl_decision).map((e) => e.data.hitl_decision)).toEqual(['rejected']);
    await eventually(() => page.getByRole('region', { name: 'Trace' }).locator('.entry-title').allTextContents()).toContain('Status: paused');
  });

  it('a refused message (developer access off) shows the API error and leaves the log as it was', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Closed agent', developer_access: false });
    const page = await open();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}/playground`);
    await page.getByLabel('Message').fill('Anyone there?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#playground-status').getByRole('alert').waitFor();
    expect(await page.getByRole('list', { name: 'Chat log' }).locator('.bubble').count()).toBe(0);
    expect(await page.getByLabel('Message').inputValue()).toBe('Anyone there?');
    expect((await w.api('GET', `/v1/agents/${agent.id}/tasks`)).body.total).toBe(0);
    // Still signed in: a refused invocation is not a refused key.
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
  });

  it('a reload in the middle of an answer follows the running turn to its end', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Reloaded agent' });
    const page = await open();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}/playground`);
    await page.getByLabel('Message').fill('Take your time [gate:reload]');
    await page.getByRole('button', { name: 'Send' }).click();
    await eventually(() => page.url()).toMatch(/task=/);
    await page.reload();
    const answer = page.locator('.bubble.role-assistant');
    await answer.getByText('Thinking…').waitFor();
    expect(await page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    w.model.gate('reload').open();
    await eventually(() => answer.getAttribute('aria-busy')).toBeNull();
    expect(await answer.textContent()).toContain('Done:');
    expect(await page.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
  });
});
