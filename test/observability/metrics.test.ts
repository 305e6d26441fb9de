import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.js';

/** The scrape-time gauges: read once per scrape, and a failing source does not take /metrics down. */
describe('metrics collected at scrape time', () => {
  it('reads the queue once per scrape for its three gauges and reports the oldest pending age', async () => {
    let reads = 0;
    const m = new Metrics({
      now: () => 100_000,
      queueStats: async () => {
        reads++;
        return { byStatus: { pending: 3, executing: 2 }, inbox: 4, oldestPendingAt: 40_000 };
      },
      poolStats: () => ({ total: 5, idle: 3, waiting: 1 }),
    });
    const { text } = await m.render();
    expect(reads).toBe(1);
    expect(text).toContain('agentry_tasks{status="pending"} 3');
    expect(text).toContain('agentry_tasks{status="executing"} 2');
    expect(text).toContain('agentry_tasks{status="paused"} 0');
    expect(text).toContain('agentry_task_inbox_depth 4');
    expect(text).toContain('agentry_task_queue_oldest_age_seconds 60');
    expect(text).toContain('agentry_db_pool_connections{state="waiting"} 1');
    await m.render();
    expect(reads).toBe(2);
  });

  it('answers without the queue gauges when the database cannot be read', async () => {
    const m = new Metrics({ now: () => 0, queueStats: async () => Promise.reject(new Error('database down')) });
    m.llmCall('openai', 'gpt', 0.5, 10, 5, false);
    const { text } = await m.render();
    expect(text).toContain('agentry_llm_calls_total{provider="openai",model="gpt",outcome="ok"} 1');
    expect(text).not.toMatch(/^agentry_tasks\{/m);
    expect(text).toMatch(/^agentry_task_inbox_depth nan$/im);
    expect(text).toMatch(/^agentry_task_queue_oldest_age_seconds nan$/im);
  });
});
