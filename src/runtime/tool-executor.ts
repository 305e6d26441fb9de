import type { RunGuard } from '../guardrails/run-guard.js';
import { ToolArgumentsError, type RuntimeTool, type ToolCallContext } from '../tools/tool-kinds.js';
import type { JsonSchemaValidator } from './json-output.js';
import type { LlmToolCall } from './llm-step.js';
import type { RunRequest } from './task-runner.js';

/**
 * Executes the tool calls of one LLM answer, one after another (a readable trace, and approvals one at a time):
 * `tool_call_request`, then the approval when the agent is supervised and the tool mutates, then the call, then
 * `tool_call_result` with payload, result, duration and is_error. A failing tool never fails the run: its error
 * goes back to the model, which can correct itself.
 */

export interface ToolCallOutcome {
  call: LlmToolCall;
  /** The result as the tool gave it (the thread keeps it). */
  content: string;
  /** What the model gets back: `content` after the run's guards (PII masked, injection notice). */
  modelContent: string;
  isError: boolean;
  /**
   * The tool ran and failed: it threw (other than for its arguments), or returned a result it calls a failure (a
   * connector's HTTP error). Not a refusal by the run or a person. What stop_strategy.stop_on_failure stops on.
   */
  failed: boolean;
}

export interface ToolExecutorDeps {
  tools: RuntimeTool[];
  supervised: boolean;
  ctx: ToolCallContext;
  req: Pick<RunRequest, 'emit' | 'signal' | 'requestApproval'>;
  validator: JsonSchemaValidator;
  /** Restores PII placeholders in the arguments before the tool runs; screens the result before the model sees it. */
  guard: RunGuard;
  now: () => number;
}

/** Tool results beyond this are cut before they reach the model (the trace keeps a bounded copy too). */
export const MAX_TOOL_RESULT_CHARS = 100_000;
const MAX_TRACE_RESULT_CHARS = 64_000;

function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}\n[... truncated, ${s.length - n} more characters]` : s;
}

function forTrace(value: unknown): unknown {
  const text = render(value);
  return text.length > MAX_TRACE_RESULT_CHARS ? cut(text, MAX_TRACE_RESULT_CHARS) : value;
}

export class ToolExecutor {
  private readonly byName: Map<string, RuntimeTool>;

  constructor(private readonly deps: ToolExecutorDeps) {
    this.byName = new Map(deps.tools.map((t) => [t.name, t]));
  }

  toolNamed(name: string): RuntimeTool | undefined {
    return this.byName.get(name);
  }

  /**
   * Runs the call, or refuses it with `refusal` (a limit, the graph, the plan) while still tracing it for the model.
   * `annotation` is added to the tool_call_request event (which graph step or plan rule the call is).
   */
  async execute(call: LlmToolCall, refusal?: string, annotation?: Record<string, unknown>): Promise<ToolCallOutcome> {
    const { req, now } = this.deps;
    const tool = this.byName.get(call.toolName);
    // The model saw placeholders, never the values: the tool gets the real ones (docs/guardrails.md).
    const payload = this.deps.guard.restoreDeep(call.input);
    // Awaited, and before the call: `emit` resolves only once the task is committed (a run may start beside its
    // submission's commit, see src/tasks/local-slots.ts), so no tool acts for a task that might not exist.
    await req.emit('tool_call_request', {
      tool_call_id: call.toolCallId,
      tool_name: call.toolName,
      graph_item_id: tool?.graphItemId ?? null,
      payload,
      ...annotation,
    });
    const started = now();
    let result: unknown;
    let isError = false;
    let failed = false;
    const problem = refusal ?? (await this.check(call, payload, tool));
    if (problem) {
      result = problem;
      isError = true;
    } else if (this.deps.supervised && tool!.mutating && !(await req.requestApproval({ tool: call.toolName, arguments: payload as Record<string, unknown> }))) {
      result = 'A person reviewing this run rejected this call; it was not executed.';
      isError = true;
    } else {
      try {
        result = await tool!.execute(payload as Record<string, unknown>, { ...this.deps.ctx, toolCallId: call.toolCallId });
        failed = tool!.failed?.(result) ?? false;
      } catch (e) {
        if (req.signal.aborted) throw req.signal.reason;
        result = e instanceof Error ? e.message : String(e);
        isError = true;
        failed = !(e instanceof ToolArgumentsError);
      }
    }
    await req.emit('tool_call_result', {
      tool_call_id: call.toolCallId,
      tool_name: call.toolName,
      graph_item_id: tool?.graphItemId ?? null,
      payload,
      result: forTrace(result),
      duration_ms: now() - started,
      is_error: isError,
      ...(refusal ? { refused: true } : {}),
    });
    const text = cut(render(result), MAX_TOOL_RESULT_CHARS);
    const content = isError ? `Error: ${text}` : text;
    const modelContent = await this.deps.guard.screen(content, { origin: 'tool', name: call.toolName });
    return { call, content, modelContent, isError, failed };
  }

  /** Why the call cannot run as asked, phrased for the model; undefined when it can. */
  private async check(call: LlmToolCall, payload: unknown, tool: RuntimeTool | undefined): Promise<string | undefined> {
    if (!tool) return `There is no tool named "${call.toolName}". Available tools: ${[...this.byName.keys()].join(', ') || 'none'}.`;
    if (call.invalid || !payload || typeof payload !== 'object' || Array.isArray(payload)) {
      return `The arguments of "${call.toolName}" must be a JSON object matching its input schema.`;
    }
    const problems = await this.deps.validator.validate(tool.inputSchema, payload);
    if (problems.length) return `Invalid arguments for "${call.toolName}": ${problems.join('; ')}.`;
    return undefined;
  }
}
