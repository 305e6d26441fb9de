import type { ModelMessage } from 'ai';
import type { ThreadMessage } from './task-runner.js';

/**
 * A continued conversation: earlier runs of the same task reach the model, bounded by
 * agno_settings.num_history_runs. Only the user's messages and the agent's answers are replayed: earlier tool calls
 * and results stay in the trace (their outcome is in the answer that followed), which keeps the history valid for
 * every provider even when the agent's tools changed in between.
 */

/** Splits the thread into runs: by the `run` number when present, else a new run at each user message. */
export function runsOf(history: ThreadMessage[]): ThreadMessage[][] {
  const runs: ThreadMessage[][] = [];
  let current: ThreadMessage[] | undefined;
  let currentRun: number | undefined;
  for (const m of history) {
    const starts = m.run !== undefined ? m.run !== currentRun : m.role === 'user';
    if (!current || starts) {
      current = [];
      runs.push(current);
      currentRun = m.run;
    }
    current.push(m);
  }
  return runs;
}

export function boundHistory(history: ThreadMessage[], numHistoryRuns: number): ThreadMessage[] {
  if (numHistoryRuns <= 0) return [];
  return runsOf(history).slice(-numHistoryRuns).flat();
}

export function historyToModelMessages(history: ThreadMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of history) {
    if (!m.content.trim()) continue;
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'assistant') out.push({ role: 'assistant', content: m.content });
  }
  return out;
}

/** The run number the next run's messages carry (1 for a new task). */
export function nextRunNumber(history: ThreadMessage[]): number {
  let max = 0;
  for (const m of history) if (typeof m.run === 'number' && m.run > max) max = m.run;
  return Math.max(max, runsOf(history).length) + 1;
}
