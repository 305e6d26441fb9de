import type { AgentConfig } from '../agents/agent.schemas.js';
import { readPath } from '../lib/dot-path.js';
import { compileSafePattern } from '../lib/safe-regexp.js';
import { parseJsonAnswer } from './json-output.js';

/**
 * When a run stops early (docs/contract.md#stop-conditions): `task_level_strategies.stop_strategy` (xpander's
 * OrchestrationStopStrategy, for one run) and `iterative_strategy.end_condition`.
 *
 * - A condition is tested on the model's text at every step (restored: the values the caller gave, not the PII
 *   placeholders the model saw). Once it is met, that text is the run's answer: the tools it asked for in the same
 *   step are not run, and the answer goes through the usual output checks (a json answer still has to validate).
 * - `stop_on_failure` (default true, as in xpander's model) ends the run `failed` at the first tool call that
 *   fails: the tool ran and threw, or a connector operation answered with an HTTP error status. Calls the run
 *   refused itself (limits, graph, plan, arguments not matching the tool's schema) and a person's rejection are not
 *   failures: the model is told and carries on.
 */

type Condition = NonNullable<NonNullable<NonNullable<AgentConfig['task_level_strategies']>['stop_strategy']>['stop_on_condition']>;

export interface RunStop {
  onFailure: boolean;
  /** Met by the model's text: the run answers with it. */
  conditions: ((text: string) => boolean)[];
}

/** The run's stop rules; undefined when it has none (the common case: the loop then checks nothing). */
export function runStop(strategies: AgentConfig['task_level_strategies']): RunStop | undefined {
  const stop = strategies?.stop_strategy;
  const conditions: Condition[] = [];
  const on = stop?.enabled === true;
  if (on && stop.stop_on_condition) conditions.push(stop.stop_on_condition);
  const iterative = strategies?.iterative_strategy;
  if (iterative && iterative.enabled !== false && iterative.end_condition) conditions.push(iterative.end_condition);
  if (!on && conditions.length === 0) return undefined;
  return { onFailure: on && stop.stop_on_failure !== false, conditions: conditions.map(tester) };
}

function tester(c: Condition): (text: string) => boolean {
  switch (c.type) {
    case 'contains': {
      const term = c.term!.toLowerCase();
      return (text) => text.toLowerCase().includes(term);
    }
    case 'regex': {
      // Validated on write (agent-settings.schemas.ts); RE2: linear in the text whatever the pattern.
      const re = compileSafePattern(c.term!);
      return (text) => re.test(text);
    }
    default:
      return (text) => compare(c, c.path ? readPath(jsonOf(text), c.path) : text.trim());
  }
}

/** The answer as JSON (a fenced block too), or undefined when it is not JSON. */
function jsonOf(text: string): unknown {
  const parsed = parseJsonAnswer(text);
  return parsed.ok ? parsed.value : undefined;
}

function compare(c: Condition, actual: unknown): boolean {
  if (c.type === 'not_empty') return actual !== undefined && actual !== null && actual !== '' && !(Array.isArray(actual) && actual.length === 0);
  if (actual === undefined) return false;
  const expected = c.value;
  if (c.type === 'equal' || c.type === 'not_equal') {
    const same = typeof actual === 'string' && typeof expected === 'string' ? actual.trim() === expected.trim() : JSON.stringify(actual) === JSON.stringify(expected ?? null);
    return c.type === 'equal' ? same : !same;
  }
  const [a, b] = [Number(actual), Number(expected)];
  if (typeof actual === 'boolean' || actual === null || actual === '' || Number.isNaN(a) || Number.isNaN(b)) return false;
  if (c.type === 'gt') return a > b;
  if (c.type === 'lt') return a < b;
  if (c.type === 'gte') return a >= b;
  return a <= b;
}
