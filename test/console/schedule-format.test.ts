import { describe, expect, it } from 'vitest';
import { describeAuthor, describeInterval, describeOutcome, describeTiming } from '../../src/console/public/js/schedule-format.js';

describe('console schedule formatting', () => {
  it('says when a schedule fires', () => {
    expect(describeTiming({ kind: 'cron', cron: '0 9 * * 1-5', timezone: 'Europe/Paris' })).toBe('cron 0 9 * * 1-5 (Europe/Paris)');
    expect(describeTiming({ kind: 'interval', interval_seconds: 3600 })).toBe('every hour');
    expect(describeTiming({ kind: 'once' })).toBe('once');
    expect(describeInterval(7200)).toBe('every 2 hours');
    expect(describeInterval(5400)).toBe('every 90 minutes');
    expect(describeInterval(86400 * 3)).toBe('every 3 days');
    expect(describeInterval(61)).toBe('every 61 seconds');
  });

  it('names outcomes and authors', () => {
    expect(describeOutcome('skipped_daily_limit')).toBe('Skipped: daily run limit');
    expect(describeOutcome('something_new')).toBe('something_new');
    expect(describeOutcome(null)).toBeNull();
    expect(describeAuthor({ type: 'agent', task_id: 't' })).toBe('Agent');
    expect(describeAuthor({ type: 'api', task_id: null })).toBe('API');
  });
});
