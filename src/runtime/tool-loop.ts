import type { ProviderOptions } from '../llm/llm-providers.js';
import type { LanguageModel, ModelMessage } from 'ai';
import { isoTime } from '../lib/clock.js';
import type { TaskTokens } from '../tasks/task.types.js';
import type { ToolCallContext, RuntimeTool } from '../tools/tool-kinds.js';
import { JsonSchemaValidator, parseJsonAnswer } from './json-output.js';
import { isContextOverflow, MAX_CONTEXT_TRIMS, trimForContext } from './context-trim.js';
import { runLlmStep } from './llm-step.js';
import type { OutputSpec } from './prompt.js';
import { JSON_REPAIR_ATTEMPTS, type RunLimits } from './run-settings.js';
import type { RunRequest, ThreadMessage } from './task-runner.js';
import { ToolExecutor } from './tool-executor.js';
import type { RunGuard } from '../guardrails/run-guard.js';
import { combinedChoice, type ToolGate } from './tool-gates.js';

/**
 * The agent loop: call the model; run the tools it asks for; give it the results; until it answers. Bounded by
 * the tool-call limit and the iteration limit; the last allowed call may not use tools, so it must answer.
 * A json answer is validated against output_schema, with corrective turns when it does not validate.
 */

export interface ToolLoopInput {
  model: LanguageModel;
  provider: string;
  modelName: string;
  providerOptions?: ProviderOptions;
  system: string;
  /** History followed by this run's user message. */
  messages: ModelMessage[];
  tools: RuntimeTool[];
  limits: RunLimits;
  output: OutputSpec;
  supervised: boolean;
  toolCtx: ToolCallContext;
  req: Pick<RunRequest, 'emit' | 'signal' | 'requestApproval'>;
  run: number;
  now: () => number;
  validator: JsonSchemaValidator;
  /**
   * The run's guardrails: tool results are screened before the model sees them; what the model writes (tool-call
   * arguments, its answer, the streamed chunks) has the PII placeholders restored before it leaves the run. The
   * conversation sent to the model keeps the placeholders; the thread and the result carry the real values.
   */
  guard: RunGuard;
  /** What restricts the model's tool calls beyond the limits: the graph (targets, is_first) and deep planning. */
  gates?: ToolGate[];
  /** Called before each model call after the first, with the messages it will be sent (tool_calls_compression). */
  beforeStep?: (messages: ModelMessage[]) => Promise<void>;
  /** with_auto_context_management: a call refused for the conversation's size is retried trimmed (context-trim.ts). */
  autoContext?: boolean;
}

export interface ToolLoopResult {
  status: 'completed' | 'failed';
  result: string;
}

export function addTokens(a: TaskTokens, b: TaskTokens): TaskTokens {
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}

const NO_MORE_TOOLS = 'No more tool calls are available in this run: give your final answer now with what you have.';

/** What a run has consumed and said so far: filled as the loop goes, so the caller still has it if the loop throws. */
export interface RunState {
  tokens: TaskTokens;
  /** Assistant and tool messages of this run, for the thread. */
  thread: ThreadMessage[];
}

export async function runToolLoop(input: ToolLoopInput, state: RunState): Promise<ToolLoopResult> {
  const { req, limits, now } = input;
  const messages = [...input.messages];
  const thread = state.thread;
  const executor = new ToolExecutor({
    tools: input.tools,
    supervised: input.supervised,
    ctx: input.toolCtx,
    req,
    validator: input.validator,
    guard: input.guard,
    now,
  });
  const guard = input.guard;
  const gates = input.gates ?? [];
  const stamp = () => isoTime(now());
  let toolCallsUsed = 0;
  let repairs = 0;
  /** A stop condition was met (run-stop.ts): the model's text is the answer, no more tools. */
  let stopped = false;
  /** Where this run's user message is in `messages`, and the trims made so far (context-trim.ts). */
  const contextTrim = { historyEnd: input.messages.length - 1, trims: 0 };

  for (let iteration = 1; ; iteration++) {
    req.signal.throwIfAborted();
    // Corrective json turns do not count against the iteration limit: they exist because of the format, not the task.
    const allowTools = !stopped && input.tools.length > 0 && iteration - repairs < limits.maxIterations && toolCallsUsed < limits.maxToolCalls;
    const toolsWereUsed = toolCallsUsed > 0 && !allowTools;
    if (iteration > 1) await input.beforeStep?.(messages);
    const call = (traceNote?: Record<string, unknown>) =>
      runLlmStep({
        model: input.model,
        provider: input.provider,
        modelName: input.modelName,
        providerOptions: input.providerOptions,
        system: toolsWereUsed ? `${input.system}\n\n${NO_MORE_TOOLS}` : input.system,
        messages,
        tools: input.tools,
        allowTools,
        toolChoice: allowTools ? combinedChoice(gates) : undefined,
        iteration,
        req,
        now,
        restorer: guard.streamRestorer(),
        traceNote,
      });
    const step = input.autoContext ? await callWithin(call, messages, contextTrim) : await call();
    state.tokens = addTokens(state.tokens, step.tokens);
    if (!stopped && limits.stop?.conditions.length && step.text.trim()) {
      const text = guard.restore(step.text);
      stopped = limits.stop.conditions.some((met) => met(text));
    }

    if (step.toolCalls.length > 0 && allowTools && !stopped) {
      // The SDK answers a call to an unknown tool with its own error result; the executor below answers every
      // call, and a second result for one call id is refused by providers (Anthropic): keep only ours.
      messages.push(...step.responseMessages.filter((m) => m.role !== 'tool'));
      thread.push({
        role: 'assistant',
        content: guard.restore(step.text),
        tool_calls: step.toolCalls.map((c) => ({ id: c.toolCallId, name: c.toolName, arguments: asObject(guard.restoreDeep(c.input)) })),
        created_at: stamp(),
        run: input.run,
      });
      const results = [];
      for (const call of step.toolCalls) {
        const limited = toolCallsUsed >= limits.maxToolCalls && !executor.toolNamed(call.toolName)?.uncounted ? `Tool call limit (${limits.maxToolCalls}) reached; this call was not executed.` : undefined;
        const refusal = limited ?? gateRefusal(gates, executor, call.toolName);
        if (!refusal && !executor.toolNamed(call.toolName)?.uncounted) toolCallsUsed++;
        const annotation = refusal ? undefined : gateAnnotation(gates, call.toolName);
        const outcome = await executor.execute(call, refusal, annotation);
        for (const g of gates) g.record(call.toolName, { isError: outcome.isError, refused: refusal !== undefined });
        results.push(outcome);
        thread.push({ role: 'tool', content: outcome.content, tool_call_id: call.toolCallId, created_at: stamp(), run: input.run });
        // stop_strategy.stop_on_failure: the rest of the step's calls are not made.
        if (outcome.failed && limits.stop?.onFailure) {
          return { status: 'failed', result: `The tool "${call.toolName}" failed, and stop_strategy.stop_on_failure ends the run: ${outcome.content.slice(0, 2000)}` };
        }
      }
      messages.push({
        role: 'tool',
        content: results.map((r) => ({
          type: 'tool-result' as const,
          toolCallId: r.call.toolCallId,
          toolName: r.call.toolName,
          output: r.isError ? { type: 'error-text' as const, value: r.modelContent } : { type: 'text' as const, value: r.modelContent },
        })),
      });
      for (const g of gates) g.endStep?.();
      continue;
    }

    // A gate may send the model back to work once more (a declared graph step not taken, an unfinished plan).
    const objection = allowTools && !stopped ? firstObjection(gates) : undefined;
    if (objection) {
      if (step.text.trim()) messages.push({ role: 'assistant', content: step.text });
      // It may quote the plan's steps, which the model wrote with real values restored: screened like tool results.
      messages.push({ role: 'user', content: await guard.screen(objection, { origin: 'feedback' }) });
      continue;
    }

    const answer = guard.restore(step.text).trim();
    if (!answer) {
      const why = step.toolCalls.length > 0 ? 'it kept asking for tools after the limits were reached' : 'the model returned an empty answer';
      return { status: 'failed', result: `The agent produced no answer: ${why}.` };
    }
    if (input.output.format !== 'json') {
      thread.push({ role: 'assistant', content: answer, created_at: stamp(), run: input.run });
      return { status: 'completed', result: answer };
    }

    const problems = await jsonProblems(answer, input);
    if (problems.length === 0) {
      const value = (parseJsonAnswer(answer) as { value: unknown }).value;
      const result = JSON.stringify(value);
      thread.push({ role: 'assistant', content: result, created_at: stamp(), run: input.run });
      return { status: 'completed', result };
    }
    if (repairs >= JSON_REPAIR_ATTEMPTS) {
      thread.push({ role: 'assistant', content: answer, created_at: stamp(), run: input.run });
      return {
        status: 'failed',
        result: `The agent's answer is not valid JSON for the requested output_schema (${problems.join('; ')}). Answer: ${answer.slice(0, 2000)}`,
      };
    }
    repairs++;
    // The answer as plain text: tool calls the model may have added despite tool_choice none have no results.
    // The problems were found in the restored answer and may quote a real value: screened like everything else.
    const correction = await guard.screen(`Your answer cannot be accepted: ${problems.join('; ')}. Reply again with only the corrected JSON value.`, {
      origin: 'feedback',
    });
    messages.push({ role: 'assistant', content: step.text }, { role: 'user', content: correction });
  }
}

/**
 * with_auto_context_management: a model call the provider refuses for the conversation's size is made again with the
 * conversation trimmed (in place, so the rest of the run keeps the trimmed form), up to MAX_CONTEXT_TRIMS in a run.
 */
async function callWithin<T>(call: (traceNote?: Record<string, unknown>) => Promise<T>, messages: ModelMessage[], t: { historyEnd: number; trims: number }): Promise<T> {
  let note: Record<string, unknown> | undefined;
  let removed = 0;
  let elided = 0;
  for (;;) {
    try {
      return await call(note);
    } catch (e) {
      if (t.trims >= MAX_CONTEXT_TRIMS || !isContextOverflow(e)) throw e;
      const trim = trimForContext(messages, t.historyEnd);
      if (!trim) throw e;
      t.trims++;
      t.historyEnd = trim.historyEnd;
      // The retried call's llm_call event says what it was not sent.
      removed += trim.removedMessages;
      elided += trim.elidedResults;
      note = { context_trimmed: { removed_messages: removed, elided_results: elided } };
    }
  }
}

function gateRefusal(gates: ToolGate[], executor: ToolExecutor, name: string): string | undefined {
  const tool = executor.toolNamed(name);
  for (const g of gates) {
    const why = g.refuse(tool, name);
    if (why) return why;
  }
  return undefined;
}

function gateAnnotation(gates: ToolGate[], name: string): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const g of gates) {
    const a = g.annotate?.(name);
    if (a) out = { ...out, ...a };
  }
  return out;
}

function firstObjection(gates: ToolGate[]): string | undefined {
  for (const g of gates) {
    const o = g.objectToAnswer?.();
    if (o) return o;
  }
  return undefined;
}

async function jsonProblems(answer: string, input: ToolLoopInput): Promise<string[]> {
  const parsed = parseJsonAnswer(answer);
  if (!parsed.ok) return [parsed.error];
  return input.output.schema ? input.validator.validate(input.output.schema, parsed.value) : [];
}

function asObject(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
}
