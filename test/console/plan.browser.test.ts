import { describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { consoleWorldPerSuite, type ConsoleWorld } from './browser-harness.js';

const eventually = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 100 });

/** The task view shows deep planning's checklist in the trace (docs/planning-and-chaining.md). */
describe.each(TEST_DBS)('plan in the console task view (%s)', (kind) => {
  let w: ConsoleWorld;
  consoleWorldPerSuite(kind, (x) => (w = x));

  it('renders each plan change as a checklist with statuses, notes and retries', { timeout: 60_000 }, async () => {
    const agent = await w.createAgent({ name: 'Planner', deep_planning: true, agno_settings: { max_plan_retries: 2 } });
    w.llm.reply(
      { toolCalls: [{ name: 'create_plan', arguments: { goal: 'Answer well', steps: ['Look it up', 'Write it down'] } }] },
      { toolCalls: [{ name: 'update_plan', arguments: { step_id: 1, status: 'completed', note: 'found <b>it</b>' } }, { name: 'update_plan', arguments: { step_id: 2, status: 'skipped', note: 'not needed' } }] },
      { text: 'All done.' },
    );
    const r = await w.api('POST', `/v1/agents/${agent.id}/invoke`, { input: { text: 'plan please' } });
    expect(r.body.status).toBe('completed');

    const page = await w.signedInPage();
    try {
      await page.goto(`${w.apiUrl}/#/tasks/${encodeURIComponent(r.body.id)}`);
      const trace = page.getByRole('region', { name: 'Execution trace' });
      const plans = trace.locator('.entry.kind-plan');
      await eventually(() => plans.count()).toBe(3);
      expect(await trace.locator('.entry.kind-plan .entry-title').allTextContents()).toEqual([
        'Plan created · 0/2 done',
        'Plan step 1 completed · 1/2 done',
        'Plan step 2 skipped · 1/2 done',
      ]);
      const last = plans.last();
      expect(await last.locator('.kind').textContent()).toBe('Plan');
      const steps = last.getByRole('list', { name: 'Plan steps' }).getByRole('listitem');
      expect(await steps.allTextContents()).toEqual(['☑ 1. Look it up (completed · found <b>it</b>)', '⊘ 2. Write it down (skipped · not needed)']);
      expect(await last.textContent()).toContain('Goal: Answer well');
      expect(await last.textContent()).toContain('Retries used: 0 of 2');
      // Notes are text, never markup.
      expect(await last.locator('b').count()).toBe(0);
      expect(w.pageErrors).toEqual([]);
    } finally {
      await page.context().close();
    }
  });
});
