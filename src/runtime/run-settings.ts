import type { AgentConfig } from '../agents/agent.schemas.js';
import { runStop, type RunStop } from './run-stop.js';

/**
 * The limits of one run, read from the agent's agno_settings and task_level_strategies (spec 2.5,
 * docs/contract.md#task-strategies). The configuration is typed and complete (agents/agent-config.ts).
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
  /** stop_strategy and iterative_strategy.end_condition (run-stop.ts); absent when the agent has neither. */
  stop?: RunStop;
}

export function runLimits(agent: Pick<AgentConfig, 'agno_settings' | 'task_level_strategies'>): RunLimits {
  const agno = agent.agno_settings;
  return {
    // 0 is agno's "no limit".
    maxToolCalls: agno.tool_call_limit || DEFAULT_TOOL_CALL_CAP,
    // The last allowed LLM call is made without tools, so a run always ends with an answer.
    // enabled false switches the strategy off: its max_iterations is kept for later, the default bound applies.
    maxIterations: iterations(agent.task_level_strategies?.iterative_strategy) ?? DEFAULT_MAX_ITERATIONS,
    numHistoryRuns: historyRuns(agent),
    stop: runStop(agent.task_level_strategies),
  };
}

/** The thread's earlier runs given to the model; session_storage false: none (each run starts fresh). */
export function historyRuns(agent: Pick<AgentConfig, 'agno_settings'>): number {
  return agent.agno_settings.session_storage ? agent.agno_settings.num_history_runs : 0;
}

function iterations(strategy: { enabled?: boolean; max_iterations?: number } | null | undefined): number | undefined {
  if (!strategy || strategy.enabled === false) return undefined;
  return strategy.max_iterations || undefined;
}
