/** Pure helpers of the schedules panel (importable by tests: no DOM). */

const UNITS = [
  [86400, 'day'],
  [3600, 'hour'],
  [60, 'minute'],
];

/** "every 2 hours", "every 90 minutes", "every 45 seconds" */
export function describeInterval(seconds) {
  for (const [size, name] of UNITS) {
    if (seconds >= size && seconds % size === 0) {
      const n = seconds / size;
      return n === 1 ? `every ${name}` : `every ${n} ${name}s`;
    }
  }
  return `every ${seconds} seconds`;
}

/** One line saying when a schedule fires: "cron 0 9 * * 1-5 (Europe/Paris)", "every hour", "once". */
export function describeTiming(s) {
  if (s.kind === 'cron') return `cron ${s.cron} (${s.timezone || 'UTC'})`;
  if (s.kind === 'interval') return describeInterval(Number(s.interval_seconds));
  return 'once';
}

const OUTCOMES = {
  started: 'Task started',
  skipped_daily_limit: 'Skipped: daily run limit',
  skipped_agent_inactive: 'Skipped: agent inactive',
  skipped_agent_missing: 'Skipped: agent deleted',
  skipped_refused: 'Skipped: run refused',
};

export function describeOutcome(outcome) {
  return outcome ? (OUTCOMES[outcome] ?? outcome) : null;
}

/** "API" or "Agent (task 0196…)": self-made schedules name the task that made them. */
export function describeAuthor(createdBy) {
  return createdBy?.type === 'agent' ? 'Agent' : 'API';
}
