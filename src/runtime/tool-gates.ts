import type { RuntimeTool } from '../tools/tool-kinds.js';

/**
 * What decides, step by step, which tools the model may call besides the limits: the agent's graph (targets,
 * is_first: graph-chain.ts) and deep planning (planning.ts). The tool loop asks every gate before each model call
 * (`choice`) and before each tool call (`refuse`), and tells them what ran (`record`).
 */

/** What the next model call must do; undefined leaves the model free ('auto'). */
export type ForcedChoice = { type: 'tool'; toolName: string } | 'required';

export interface ToolGate {
  /** The tool choice of the next model call, when this gate needs one. */
  choice(): ForcedChoice | undefined;
  /** Why this call may not run now, phrased for the model; undefined when it may. Called in call order. */
  refuse(tool: RuntimeTool | undefined, toolName: string): string | undefined;
  /** What the trace's tool_call_request of an allowed call should also say (e.g. the chain step it is). */
  annotate?(toolName: string): Record<string, unknown> | undefined;
  /** A call has run (or was refused: `refused` true). */
  record(toolName: string, outcome: { isError: boolean; refused: boolean }): void;
  /** Called once a model step's calls are all done. */
  endStep?(): void;
  /**
   * The model answered: a correction to send instead of accepting the answer (e.g. an unfinished plan), or
   * undefined to accept it. Each gate bounds how often it objects.
   */
  objectToAnswer?(): string | undefined;
}

/** The first gate that forces a choice wins (the plan comes before the graph: gates are ordered by the runner). */
export function combinedChoice(gates: ToolGate[]): ForcedChoice | undefined {
  for (const g of gates) {
    const c = g.choice();
    if (c) return c;
  }
  return undefined;
}
