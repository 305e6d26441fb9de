/**
 * The limits of one run, read from the agent's agno_settings and task_level_strategies (spec 2.5,
 * docs/contract.md#task-strategies). The stored agent is loosely typed JSON, so every field is read defensively.
 */

/** agno's tool_call_limit 0 means "no limit"; a runaway loop still has to end, so 0 gets this cap. */
export const DEFAULT_TOOL_CALL_CAP = 50;
/** LLM calls per run when iterative_strategy does not say. */
export const DEFAULT_MAX_ITERATIONS = 25;
/** docs/contract.md#agent-create: num_history_runs defaults to 10. */
export const DEFAULT_HISTORY_RUNS = 10;
/** Corrective turns when a json answer does not validate against output_schema. */
export const JSON_REPAIR_ATTEMPTS = 2;

export interface RunLimits {
  maxToolCalls: number;
  /** LLM calls in one run, including the final answer. */
  maxIterations: number;
  numHistoryRuns: number;
}

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function posInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

export function runLimits(agent: Record<string, unknown>): RunLimits {
  const agno = obj(agent.agno_settings);
  const strategies = obj(agent.task_level_strategies);
  const iterative = obj(strategies.iterative_strategy);
  const history = agno.num_history_runs;
  return {
    maxToolCalls: posInt(agno.tool_call_limit) ?? DEFAULT_TOOL_CALL_CAP,
    // The last allowed LLM call is made without tools, so a run always ends with an answer.
    maxIterations: posInt(iterative.max_iterations) ?? DEFAULT_MAX_ITERATIONS,
    // session_storage false: the thread's earlier runs are not given to the model (each run starts fresh).
    numHistoryRuns:
      agno.session_storage === false ? 0 : typeof history === 'number' && Number.isInteger(history) && history >= 0 ? history : DEFAULT_HISTORY_RUNS,
  };
}
