import { describe, expect, it } from 'vitest';
import { presentXpanderEvent } from '../../src/xpander/task.presenter.js';

/** Deep planning's `plan` trace events reach xpander's SDK as its `plan_updated` with the SDK's DeepPlanning model. */
describe('plan events in the xpander SDK stream', () => {
  it('become plan_updated with {enabled, enforce, started, question_raised, tasks[{id, title, completed}]}', () => {
    const out = presentXpanderEvent({
      type: 'plan',
      task_id: 't1',
      organization_id: 'o1',
      time: '2026-11-22T11:00:00.000+00:00',
      data: {
        action: 'updated',
        step_id: 1,
        enforce: true,
        plan: {
          goal: 'g',
          steps: [
            { id: 1, title: 'Fetch', status: 'completed', attempts: 1, note: null },
            { id: 2, title: 'Retry', status: 'failed', attempts: 2, note: 'x' },
            { id: 3, title: 'Write', status: 'pending', attempts: 0, note: null },
          ],
          retries_used: 1,
          max_retries: 3,
        },
      },
    });
    expect(out).toEqual({
      type: 'plan_updated',
      task_id: 't1',
      organization_id: 'o1',
      time: '2026-11-22T11:00:00.000+00:00',
      data: {
        enabled: true,
        enforce: true,
        started: true,
        question_raised: false,
        tasks: [
          { id: '1', title: 'Fetch', completed: true },
          { id: '2', title: 'Retry', completed: false },
          { id: '3', title: 'Write', completed: false },
        ],
      },
    });
  });
});
