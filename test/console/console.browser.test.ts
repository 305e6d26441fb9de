import { describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { pagesPerTest, reachable, consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';

/**
 * The console in a real browser against a whole running Agentry: sign in, open an agent, trigger its webhook,
 * watch the task appear and complete live, read its trace, stop a running task, filter and page the tasks.
 */
/** Waits for a value in the page; generous, because CI machines are shared and slow. */
const eventually = <T>(fn: () => T | Promise<T>, opts: { timeout?: number } = {}) => expect.poll(fn, { timeout: 15_000, interval: 100, ...opts });

describe.each(TEST_DBS)('console in the browser (%s)', (kind) => {
  let w: ConsoleWorld;
  const { open, track } = pagesPerTest(() => w);
  consoleWorldPerSuite(kind, (x) => (w = x));

  it('signs in with an API key kept in session storage, never in the address, and signs out', { timeout: 60_000 }, async () => {
    const context = await w.browser.newContext();
    const page = track(await context.newPage());
    await page.goto(`${w.apiUrl}/#/tasks`);
    await eventually(() => page.url()).toContain('#/signin');
    const key = page.getByLabel('API key');
    await eventually(() => key.evaluate((el) => el === document.activeElement)).toBe(true);

    await key.fill('agk_not_a_real_key');
    await key.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await key.fill(w.key);
    await key.press('Enter');
    // The address asked for before signing in is where the console goes after.
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([w.key]);
    expect(page.url()).not.toContain(w.key);
    expect(await page.evaluate(() => document.cookie)).toBe('');

    await page.reload();
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Primary' }).isHidden()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign out' }).isHidden()).toBe(true);
  });

  it('opens an agent: configuration, versions, webhook URLs with copy, enable and regenerate', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Billing helper', description: 'Answers billing questions', instructions: { role: ['You answer billing questions'], goal: [], general: '' } });
    const page = await open();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('link', { name: /Billing helper/ }).click();
    await page.getByRole('heading', { name: /Billing helper/, level: 1 }).waitFor();

    const config = page.getByRole('region', { name: 'Configuration' });
    await eventually(() => config.textContent()).toContain('You answer billing questions');
    expect(await config.textContent()).toContain('openai / gpt-test');
    const versions = page.getByRole('table', { name: /Published versions/ });
    await eventually(() => versions.getByRole('row').count()).toBe(2);
    await versions.getByText('Show version 2').click();
    await eventually(() => versions.getByRole('region').or(versions.locator('pre')).first().textContent()).toContain('"name": "Billing helper"');

    const keyUrl = page.getByLabel('Key-based URL', { exact: true });
    expect(await keyUrl.inputValue()).toBe(agent.webhook_url);
    await page.getByRole('button', { name: 'Copy Key-based URL' }).click();
    await eventually(() => page.evaluate(() => navigator.clipboard.readText())).toBe(agent.webhook_url);

    await page.getByRole('button', { name: 'Enable public URL' }).click();
    const publicUrl = page.getByLabel('Public URL', { exact: true });
    await eventually(() => publicUrl.inputValue()).toMatch(/\/wh_[A-Za-z0-9_-]{43}$/);
    const first = await publicUrl.inputValue();
    // Focus moved to the new URL's copy button: the next thing a keyboard user wants.
    await eventually(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Copy Public URL');
    await page.getByRole('button', { name: 'Copy Public URL' }).click();
    await eventually(() => page.evaluate(() => navigator.clipboard.readText())).toBe(first);

    await page.getByRole('button', { name: 'Regenerate URL' }).click();
    const dialog = page.getByRole('dialog', { name: 'Regenerate the public URL?' });
    await dialog.getByRole('button', { name: 'Regenerate' }).click();
    await eventually(() => publicUrl.inputValue()).not.toBe(first);
    const second = await publicUrl.inputValue();
    expect(second).toMatch(/\/wh_[A-Za-z0-9_-]{43}$/);
    const old = await fetch(reachable(first, w.server), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"hi"}' });
    expect(old.status).toBe(401);

    // After a reload only the masked URL is known: the secret is never shown twice.
    await page.reload();
    await eventually(() => page.getByLabel('Public URL', { exact: true }).inputValue()).toContain('wh_********');
    expect(await page.getByRole('button', { name: 'Copy Public URL' }).count()).toBe(0);
  });

  it('a webhook call appears live; its task completes live with the full trace', { timeout: 90_000 }, async () => {
    const fn = await w.api('POST', '/v1/custom_functions', {
      name: 'word_count',
      description: 'Counts the words of a text',
      code: 'async function run({ text }) { return { words: text.split(/\\s+/).filter(Boolean).length }; }',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    expect(fn.status, JSON.stringify(fn.body)).toBe(201);
    const agent = await w.createAgent({ name: 'Word counter', tools: [{ type: 'custom_function', custom_function_id: fn.body.id }] });
    const enabled = await w.api('POST', `/v1/agents/${agent.id}/webhook`);
    const page = await open();
    await page.goto(`${w.apiUrl}/#/agents/${agent.id}`);
    const latest = page.getByRole('region', { name: 'Latest tasks' });
    await latest.getByText('No tasks yet.').waitFor();

    const hook = await fetch(reachable(enabled.body.url, w.server), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: '[gate:webhook] [tool:word_count] one two three', ticket: 7 }),
    });
    expect(await hook.json()).toEqual({ status: 'Started' });

    // The task shows up on the open page without a reload, still running (the model waits at the gate).
    const row = latest.getByRole('row').filter({ hasText: 'one two three' });
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toContain('webhook');
    await row.getByRole('link').first().click();
    const status = page.locator('.page-head .badge').first();
    await eventually(() => status.textContent(), { timeout: 15_000 }).toBe('executing');
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    expect(await page.getByRole('button', { name: 'Stop task' }).isVisible()).toBe(true);
    const input = page.getByRole('region', { name: 'Input' });
    expect(await input.textContent()).toContain('"ticket": 7');

    w.model.gate('webhook').open();
    await eventually(() => status.textContent(), { timeout: 20_000 }).toBe('completed');
    expect(await page.getByRole('button', { name: 'Stop task' }).count()).toBe(0);

    // The result is rendered Markdown; the trace has both LLM calls and the tool call with timings and tokens.
    const result = page.getByRole('region', { name: 'Result' });
    await result.getByRole('heading', { name: 'Counted' }).waitFor();
    expect(await result.locator('strong').textContent()).toBe('{"words":3}');
    const trace = page.getByRole('region', { name: 'Execution trace' });
    await eventually(() => trace.locator('.timeline-summary').textContent()).toBe('2 LLM calls · 1 tool call · 316 tokens (280 in / 36 out)');
    const titles = await trace.locator('.entry-title').allTextContents();
    expect(titles).toEqual(['Task created', 'Status: executing', 'LLM call · openai/gpt-test', 'Tool · word_count', 'LLM call · openai/gpt-test', 'Task completed']);
    const tool = trace.locator('.entry.kind-tool');
    expect(await tool.locator('.meta').first().textContent()).toMatch(/^\d+(\.\d+)? (ms|s)$/);
    await tool.getByText('Arguments').click();
    expect(await tool.locator('pre').first().textContent()).toContain('"text": "one two three"');
    await tool.getByText('Result').click();
    expect(await tool.locator('pre').nth(1).textContent()).toContain('"words": 3');
    expect(await trace.locator('.entry.kind-llm').first().textContent()).toContain('132 (120 in / 12 out) tokens');

    const thread = page.getByRole('region', { name: 'Thread' });
    await eventually(() => thread.locator('.message .role').allTextContents()).toEqual(expect.arrayContaining(['user', 'assistant', 'tool']));

    // Reopened later, the same page is built from the stored trace.
    await page.reload();
    await eventually(() => page.getByRole('region', { name: 'Execution trace' }).locator('.entry-title').allTextContents()).toEqual(titles);
  });

  it('shows uploaded files, and follows a task by polling when the event stream is blocked', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'File reader' });
    const page = await open();
    // A proxy that refuses streams: every SSE request fails, the JSON trace still works.
    await page.route('**/v1/tasks/*/events', (route) =>
      /text\/event-stream/.test(route.request().headers().accept ?? '') ? route.abort('connectionreset') : route.continue(),
    );
    const form = new FormData();
    form.set('prompt', 'Summarise the attachment [gate:files]');
    form.set('files', new Blob(['Quarterly numbers: revenue up 12 percent.'], { type: 'text/plain' }), 'report.txt');
    // The key form is synchronous unless asked otherwise, and its query string wins over the body.
    const url = reachable(agent.webhook_url, w.server).replace('asynchronous=false', 'asynchronous=true');
    const hook = await fetch(url, { method: 'POST', headers: { 'x-api-key': w.key }, body: form });
    expect(await hook.json()).toEqual({ status: 'Started' });
    const tasks = await w.api('GET', `/v1/agents/${agent.id}/tasks`);
    const id = tasks.body.items[0].id;
    await w.waitTask(id, (t) => t.status === 'executing');

    await page.goto(`${w.apiUrl}/#/tasks/${encodeURIComponent(id)}`);
    const input = page.getByRole('region', { name: 'Input' });
    const file = input.getByRole('link', { name: 'report.txt' });
    await file.waitFor();
    expect(await file.getAttribute('href')).toMatch(/\/v1\/files\/[^?]+\?expires=\d+&sig=/);
    expect(await file.getAttribute('rel')).toContain('noopener');
    await input.getByText('Extracted text').click();
    expect(await input.locator('details pre').textContent()).toContain('revenue up 12 percent');

    await page.getByRole('status').filter({ hasText: 'Refreshing every few seconds' }).waitFor({ timeout: 20_000 });
    w.model.gate('files').open();
    await eventually(() => page.locator('.page-head .badge').first().textContent(), { timeout: 20_000 }).toBe('completed');
    await eventually(() => page.locator('.entry-title').allTextContents()).toContain('LLM call · openai/gpt-test');
    await eventually(() => page.getByRole('region', { name: 'Result' }).textContent()).toContain('Done:');
  });

  it('stops a running task from its page', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Slow thinker' });
    const invoked = await w.api('POST', `/v1/agents/${agent.id}/invoke/async`, { input: { text: 'Think forever [hang]' } });
    expect(invoked.status, JSON.stringify(invoked.body)).toBeLessThan(300);
    await w.waitTask(invoked.body.id, (t) => t.status === 'executing');

    const page = await open();
    await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('row').filter({ hasText: 'Think forever' }).getByRole('link').first().click();
    const status = page.locator('.page-head .badge').first();
    await eventually(() => status.textContent()).toBe('executing');

    await page.getByRole('button', { name: 'Stop task' }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop this task?' });
    // Escape cancels; nothing is stopped.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await w.api('GET', `/v1/tasks/${invoked.body.id}`)).body.status).toBe('executing');

    await page.getByRole('button', { name: 'Stop task' }).click();
    await dialog.getByRole('button', { name: 'Stop task' }).click();
    await eventually(() => status.textContent(), { timeout: 15_000 }).toBe('stopped');
    expect(await page.getByRole('button', { name: 'Stop task' }).count()).toBe(0);
    const stored = await w.waitTask(invoked.body.id, (t) => t.status === 'stopped');
    expect(stored.is_manually_stopped).toBe(true);
    await eventually(() => page.locator('.entry-title').last().textContent()).toBe('Task stopped');
  });

  it('filters the tasks by agent, status, source and date, and pages through them', { timeout: 90_000 }, async () => {
    const agent = await w.createAgent({ name: 'Paging agent' });
    const ids: string[] = [];
    for (let k = 0; k < 21; k++) {
      const r = await w.api('POST', `/v1/agents/${agent.id}/invoke/async`, { input: { text: `paging task ${k}` } });
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      ids.push(r.body.id);
    }
    // One task in a state no other task of this agent reaches: stopped before the model answers.
    const stopped = await w.api('POST', `/v1/agents/${agent.id}/invoke/async`, { input: { text: 'stop me [hang]' } });
    expect((await w.api('POST', `/v1/tasks/${stopped.body.id}/stop`)).status).toBe(200);
    const page = await open();
    await page.goto(`${w.apiUrl}/#/tasks`);
    await page.getByLabel('Agent').selectOption({ label: 'Paging agent' });
    await page.getByLabel('Source').selectOption('api');
    await page.getByRole('button', { name: 'Apply filters' }).click();

    const results = page.locator('#task-results');
    const pager = page.getByRole('navigation', { name: 'Task pages' });
    await pager.getByText('Page 1 of 2 · 22 in total').waitFor();
    expect(await results.getByRole('row').count()).toBe(21); // header + 20
    const firstPage = await results.locator('tbody a.task-lead').evaluateAll((as) => as.map((a) => a.getAttribute('title')));
    await pager.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Page 2 of 2 · 22 in total').waitFor();
    const secondPage = await results.locator('tbody a.task-lead').evaluateAll((as) => as.map((a) => a.getAttribute('title')));
    expect([...firstPage, ...secondPage].sort()).toEqual([...ids, stopped.body.id].sort());
    // The filters are in the address, so the page can be shared and reloaded.
    expect(page.url()).toContain(`agent_id=${agent.id}`);
    expect(page.url()).toContain('page=2');
    await page.reload();
    await page.getByText('Page 2 of 2 · 22 in total').waitFor();
    expect(await page.getByLabel('Source').inputValue()).toBe('api');

    await page.getByLabel('Status').selectOption('stopped');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('1 in total').waitFor();
    expect(await results.locator('tbody a.task-lead').getAttribute('title')).toBe(stopped.body.id);

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Source').selectOption('webhook');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await results.getByText('No tasks match.').waitFor();

    const tomorrow = new Date(Date.now() + 86_400_000);
    const day = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}`;
    await page.goto(`${w.apiUrl}/#/tasks?agent_id=${agent.id}&from=${day}`);
    await results.getByText('No tasks match.').waitFor();
    await page.goto(`${w.apiUrl}/#/tasks?agent_id=${agent.id}&to=${day}`);
    await page.getByText('Page 1 of 2 · 22 in total').waitFor();
  });

  it('is usable from the keyboard, with landmarks and a name for every control', { timeout: 60_000 }, async () => {
    const page = await open();
    await page.goto(`${w.apiUrl}/#/tasks`);
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    for (const [role, name] of [['banner', undefined], ['navigation', 'Primary'], ['main', undefined], ['search', 'Filter tasks']] as const)
      expect(await page.getByRole(role, name ? { name } : {}).count(), role).toBe(1);
    // The view's heading has focus after navigation. The skip link comes first in the tab order and moves focus
    // to the main content without changing the page's address. The heading is drawn before the view's data
    // arrives and takes focus once it has, so this waits rather than reading once.
    await eventually(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    const firstFocusable = await page.evaluate(() => document.querySelector<HTMLElement>('a[href], button:not([hidden]), input, select')?.textContent);
    expect(firstFocusable).toBe('Skip to content');
    const address = page.url();
    await page.getByRole('link', { name: 'Skip to content' }).focus();
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    expect(page.url()).toBe(address);
    const unnamed = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea, button, a[href]')]
        .filter((el) => (el as HTMLElement).offsetParent !== null)
        .filter((el) => {
          const labelled = (el as HTMLInputElement).labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
          return !labelled && !(el.textContent ?? '').trim();
        })
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    expect(unnamed).toEqual([]);
    // Keyboard only: the Agents link is reachable and works with Enter.
    await page.getByRole('link', { name: 'Agents', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
  });
});
