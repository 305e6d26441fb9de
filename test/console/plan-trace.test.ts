import { describe, expect, it } from 'vitest';
import { TraceModel } from '../../src/console/public/js/trace.js';

const at = (ms: number) => new Date(Date.parse('2026-11-22T11:00:00.000Z') + ms).toISOString();
const plan = (statuses: string[], retries = 0) => ({
  goal: 'Ship it',
  steps: statuses.map((status, i) => ({ id: i + 1, title: `Step ${i + 1}`, status, attempts: status === 'pending' ? 0 : 1, note: null })),
  retries_used: retries,
  max_retries: 2,
});

/** The console's trace model shows deep planning's checklist and the graph's chained calls (docs/planning-and-chaining.md). */
describe('trace model: plans and graph chaining', () => {
  it('turns plan events into plan entries that say what changed and how far the plan is', () => {
    const m = new TraceModel();
    const titles = [
      m.add({ type: 'plan', time: at(0), data: { action: 'created', run: 1, attempt: 1, plan: plan(['pending', 'pending']) } }),
      m.add({ type: 'plan', time: at(5), data: { action: 'updated', step_id: 1, plan: plan(['completed', 'pending']) } }),
      m.add({ type: 'plan', time: at(9), data: { action: 'retry', step_id: 2, plan: plan(['completed', 'in_progress'], 1) } }),
      m.add({ type: 'plan', time: at(12), data: { action: 'restored', attempt: 2, plan: plan(['completed', 'in_progress'], 1) } }),
    ].map((e) => e!.title);
    expect(titles).toEqual(['Plan created · 0/2 done', 'Plan step 1 completed · 1/2 done', 'Plan step 2 retried · 1/2 done', 'Plan resumed after an interruption · 1/2 done']);
    expect(m.entries.every((e) => e.kind === 'plan')).toBe(true);
    expect(m.plan!.retries_used).toBe(1);
    // A malformed event still shows, as an empty plan.
    expect(m.add({ type: 'plan', time: at(20), data: { action: 'created' } })!.title).toBe('Plan created · 0/0 done');
  });

  it('names the predecessor of a call the graph chained', () => {
    const m = new TraceModel();
    const e = m.add({ type: 'tool_call_request', time: at(0), data: { tool_call_id: 'c2', tool_name: 'summarize', payload: {}, graph: { chained_after: 'search', step: 'target' } } });
    expect(e!.title).toBe('Tool · summarize (after search)');
    expect(m.add({ type: 'tool_call_request', time: at(1), data: { tool_call_id: 'c3', tool_name: 'search', payload: {} } })!.title).toBe('Tool · search');
  });
});
