import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ATTEMPTS, taskStrategies } from '../../src/tasks/task-agents.js';
import { isValidTaskId } from '../../src/tasks/task-ids.js';

describe('task ids', () => {
  it('accepts 1-128 printable characters, a chat id or any script', () => {
    for (const id of ['a', 'chat:42 #main', 'x'.repeat(128), 'ünïcödé-会话', '🚀'.repeat(128)]) expect(isValidTaskId(id), id).toBe(true);
  });
  it('refuses empty, blank, too long, control characters, separators and lone surrogates', () => {
    for (const id of ['', '   ', 'x'.repeat(129), '🚀'.repeat(129), 'a\nb', 'a\tb', 'a\u0000', 'a\u007f', 'a\u0085', 'a\u2028b', '\ud800x']) {
      expect(isValidTaskId(id), JSON.stringify(id)).toBe(false);
    }
  });
});

describe('task level strategies', () => {
  it('allows crash recovery without a retry strategy, but does not retry errors', () => {
    expect(taskStrategies({})).toEqual({ maxAttempts: DEFAULT_MAX_ATTEMPTS, retryOnError: false, maxRunsPerDay: undefined });
    expect(taskStrategies({ task_level_strategies: { retry_strategy: { enabled: false, max_retries: 9 } } }).maxAttempts).toBe(DEFAULT_MAX_ATTEMPTS);
  });
  it('takes attempts from an enabled retry strategy', () => {
    expect(taskStrategies({ task_level_strategies: { retry_strategy: { enabled: true, max_retries: 4 } } })).toMatchObject({ maxAttempts: 5, retryOnError: true });
    expect(taskStrategies({ task_level_strategies: { retry_strategy: { enabled: true, max_retries: 0 } } })).toMatchObject({ maxAttempts: 1, retryOnError: false });
  });
  it('reads max_runs_per_day, 0 and nonsense meaning no limit', () => {
    expect(taskStrategies({ task_level_strategies: { max_runs_per_day: 7 } }).maxRunsPerDay).toBe(7);
    for (const v of [0, -1, 1.5, '3', null]) expect(taskStrategies({ task_level_strategies: { max_runs_per_day: v } }).maxRunsPerDay).toBeUndefined();
  });
});
