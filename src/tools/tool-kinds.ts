import type { RunnableAgentConfig } from '../agents/agent-config.js';
import type { Awaitable } from '../lib/awaitable.js';
import type { TaskEventType } from '../tasks/task.types.js';

/**
 * Tool kinds are variants in two registries (docs/architecture.md rule 8), each kind one file:
 *
 * - create time (agents domain): a `tools` entry of spec 2.3 is validated against the organization and resolved
 *   into `attached_tools` + `graph` items  -> ToolEntryResolver, registered in src/agents/tool-resolvers/index.ts
 * - run time (runtime domain): the agent's graph items become LLM tools  -> RuntimeToolProvider, registered in
 *   src/runtime/tools/index.ts
 */

/** Tool kinds that orchestrate other agents: sub-agents and workflows (spec 2.2: `regular` agents have none). */
export const ORCHESTRATION_KINDS: ReadonlySet<string> = new Set(['agent', 'workflow']);

export interface AttachedConnector {
  id: string;
  operation_ids: string[];
}

export type { GraphItem } from './graph-item.js';
import type { GraphItem } from './graph-item.js';

export interface ResolvedToolEntry {
  attached?: AttachedConnector;
  graph: GraphItem[];
}

export interface ToolEntryResolver<E = Record<string, unknown>> {
  /**
   * Validates one `tools` entry for the organization and resolves it. Throws AppError.invalid naming the entry
   * (loc e.g. ['body','tools',3,'connection_id']) when a referenced object does not exist.
   */
  resolve(organizationId: string, entry: E, loc: (string | number)[]): Promise<ResolvedToolEntry>;
}

/** A tool offered to the LLM for one run. */
export interface RuntimeTool {
  /** Provider-safe name: ^[a-zA-Z0-9_-]{1,64}$ */
  name: string;
  description: string;
  /** JSON Schema of the arguments; top-level type object. */
  inputSchema: Record<string, unknown>;
  /** Mutating calls pause a supervised agent for approval (docs/contract.md#supervision). */
  mutating: boolean;
  /** The graph item it came from, for the trace. */
  graphItemId?: string;
  /** Bookkeeping of the run itself (deep planning's checklist): not counted against agno_settings.tool_call_limit. */
  uncounted?: boolean;
  execute(args: Record<string, unknown>, ctx: ToolCallContext): Promise<unknown>;
  /** Whether a result the tool returned (rather than threw) is a failure: a connector's HTTP error status (stop_on_failure). */
  failed?(result: unknown): boolean;
}

/** Thrown by a tool whose arguments its target refused: the model's mistake, told to it, not the tool failing. */
export class ToolArgumentsError extends Error {}

export interface ToolCallContext {
  organizationId: string;
  taskId: string;
  agentId: string;
  signal: AbortSignal;
  /** MCP graph item id -> token, from the invocation (never stored). */
  userTokens: Record<string, string>;
  /** The end user's verified OIDC pre-auth token, when the agent uses pre-auth (handed to sub-agents, and to MCP with `oidc_pre_auth_token_mcp_audience`). */
  preAuthToken?: string;
  /**
   * The id of the user the task runs for (`task.user_id`, else `input.user.id`), when known. Selects the user's
   * stored OAuth tokens of oauth2 registry MCP servers when `userTokens` has none for the server's graph item.
   */
  userId?: string;
  /** Appends an event to the task's trace: sub_agent_trigger, auth_event, ... (tool_call_* are the runner's). */
  emit(type: TaskEventType, data: Record<string, unknown>): Promise<void>;
  /** Agent calls that led to this task (`task.call_depth`): a sub-agent's task is one deeper. */
  callDepth?: number;
  /** RunRequest.parkWhile: waits on a child task without holding a worker slot. */
  parkWhile?<T>(waiting: Promise<T>): Promise<T>;
  /** The LLM's id of the call being executed; absent while tools are being built. */
  toolCallId?: string;
}

/** The agent configuration as the tool providers and context contributors see it: the run's, typed and complete. */
export type RunContextAgent = RunnableAgentConfig;

export interface RuntimeToolProvider {
  /** Graph item types (and sub_types) this provider handles, e.g. ['tool'], ['mcp'], ['agent']. */
  /** Synchronous when there is nothing to look up (no items of its kind): see src/lib/awaitable.ts. */
  buildTools(agent: RunContextAgent, ctx: ToolCallContext): Awaitable<RuntimeTool[]>;
}
