import type { RunnableAgentConfig } from '../agents/agent-config.js';
import type { Task, TaskEvent, TaskSubmission, TaskTokens } from '../tasks/task.types.js';

/**
 * The seam between the tasks domain (queue, worker, persistence) and the runtime (LLM + tools).
 * The worker claims a task, builds a RunRequest and calls TaskRunner.run; it persists what comes back.
 */

/** One message of a task's conversation thread (GET /v1/tasks/{id}/thread). */
export interface ThreadMessage {
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string;
  /** Tool calls made by an assistant message, or the call a tool message answers. */
  tool_calls?: { id: string; name: string; arguments: Record<string, unknown> }[];
  tool_call_id?: string;
  created_at: string;
  /** Which run of the task produced it (a continued conversation has several). */
  run?: number;
}

export interface RunRequest {
  task: Task;
  /** The agent configuration of the version this task runs (published version or draft), typed and complete. */
  agent: RunnableAgentConfig;
  /** Earlier messages of this task (continued conversation), oldest first; the runner bounds it by num_history_runs. */
  history: ThreadMessage[];
  /** Per-run extras from the submission that are not part of the task record. */
  extras: Pick<TaskSubmission, 'userTokens' | 'disableAttachmentInjection' | 'instructionsOverride' | 'expectedOutput'>;
  /** Aborted when the task is stopped or the worker loses its lease. */
  signal: AbortSignal;
  /**
   * Appends an event to the trace (and to live subscribers). The runner emits llm_call, tool_call_*, chunk, ...
   * Resolves once the task is committed (not the event: the trace is written in batches); rejects if it never will
   * be. The runner awaits it before any side effect (a tool call emits tool_call_request first).
   */
  emit(type: TaskEvent['type'], data: Record<string, unknown>): Promise<void>;
  /** Supervised agents: resolves true when a person approves the mutating call, false when rejected. */
  requestApproval(request: { tool: string; arguments: Record<string, unknown> }): Promise<boolean>;
  /**
   * Lends this run's worker slot to other tasks until `waiting` settles: a run waiting for a child task (a sub-agent)
   * uses no CPU, and the child may need the very slot it holds. Absent outside a worker.
   */
  parkWhile?<T>(waiting: Promise<T>): Promise<T>;
  /** Which run (submission) of the task this is: a continued conversation has several, each retried attempts keep it. */
  run?: number;
  /**
   * Resolves once every event emitted so far is written (emit alone lets them wait for the next batch). A runner that
   * resumes from its trace after a crash (workflows) awaits it between side effects; a refused write aborts `signal`.
   */
  checkpoint?(): Promise<void>;
}

export interface RunOutcome {
  status: 'completed' | 'failed' | 'error';
  result: string;
  tokens: TaskTokens;
  /** Messages this run added to the thread (user input first). */
  messages: ThreadMessage[];
  llm_model_provider: string | null;
  llm_model_name: string | null;
}

export interface TaskRunner {
  /**
   * Runs the task once. Resolves with the outcome (provider failures and missing credentials are an `error`
   * outcome whose result says what went wrong). Rejects with RunAbortedError when `signal` aborts (stop, lost
   * lease): the worker decides what that means. Any other rejection is unexpected (a bug, the database gone).
   */
  run(req: RunRequest): Promise<RunOutcome>;
}

/** The run was aborted through RunRequest.signal; carries what the run consumed and said until then. */
export class RunAbortedError extends Error {
  constructor(
    readonly tokens: TaskTokens,
    readonly messages: ThreadMessage[],
    readonly reason: unknown,
  ) {
    super('The run was aborted');
    this.name = 'RunAbortedError';
  }
}
