import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { RunAbortedError, type RunOutcome, type RunRequest, type TaskRunner } from '../runtime/task-runner.js';
import type { Metrics } from './metrics.js';
import type { Tracing } from './tracing.js';

/**
 * Watches every task run from outside the runtime: a TaskRunner that wraps the real one and reads the events the run
 * emits (llm_call, tool_call_request, tool_call_result), which already carry what observability needs. From them
 * it feeds the Prometheus metrics, the OpenTelemetry spans (GenAI semantic conventions: `invoke_agent` for the
 * task, `chat` per LLM call, `execute_tool` per tool call), and it writes the one info line per run end.
 *
 * Without metrics and tracing the only added work per event is a switch on its type; without tracing no span
 * object is created. The events go on to the worker unchanged.
 */
export interface RunObserverDeps {
  metrics?: Metrics;
  tracing?: Tracing;
  log: Logger;
  clock: Clock;
}

/** GenAI attribute names (semantic conventions 1.3x, still "development": spelled out rather than imported from incubating). */
const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  agentId: 'gen_ai.agent.id',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
} as const;

interface RunState {
  started: number;
  span?: Span;
  tools?: Map<string, { span?: Span; started: number }>;
}

export class ObservedRunner implements TaskRunner {
  constructor(
    private readonly inner: TaskRunner,
    private readonly d: RunObserverDeps,
  ) {}

  async run(req: RunRequest): Promise<RunOutcome> {
    const { task, agent } = req;
    const state: RunState = { started: this.d.clock.now() };
    if (this.d.tracing) {
      const name = agent.name || agent.id;
      state.span = this.d.tracing.tracer.startSpan(`invoke_agent ${name}`, {
        kind: SpanKind.INTERNAL,
        startTime: state.started,
        attributes: {
          [GEN_AI.operation]: 'invoke_agent',
          [GEN_AI.agentId]: agent.id,
          [GEN_AI.agentName]: name,
          [GEN_AI.conversationId]: task.id,
          'agentry.task.id': task.id,
          'agentry.organization.id': task.organization_id,
          'agentry.task.attempt': task.execution_attempts,
          ...(task.parent_execution ? { 'agentry.task.parent_id': task.parent_execution } : {}),
        },
      });
    }
    const observed: RunRequest = {
      ...req,
      emit: (type, data) => {
        this.onEvent(state, type, data);
        return req.emit(type, data);
      },
    };
    try {
      const outcome = await this.inner.run(observed);
      this.finish(req, state, outcome.status, outcome.tokens, outcome.llm_model_provider, outcome.llm_model_name, outcome.status === 'completed' ? undefined : outcome.result);
      return outcome;
    } catch (err) {
      const aborted = err instanceof RunAbortedError;
      this.finish(req, state, aborted ? 'aborted' : 'error', aborted ? err.tokens : undefined, null, null, err instanceof Error ? err.message : String(err));
      throw err;
    }
  }

  private onEvent(state: RunState, type: string, data: Record<string, unknown>): void {
    switch (type) {
      case 'llm_call':
        return this.llmCall(state, data);
      case 'tool_call_request':
        return this.toolRequest(state, data);
      case 'tool_call_result':
        return this.toolResult(state, data);
    }
  }

  private llmCall(state: RunState, data: Record<string, unknown>): void {
    const provider = str(data.provider);
    const model = str(data.model);
    const latencyMs = num(data.latency_ms);
    const tokens = (data.tokens ?? {}) as { prompt_tokens?: number; completion_tokens?: number };
    const failed = data.error !== undefined;
    this.d.metrics?.llmCall(provider, model, latencyMs / 1000, tokens.prompt_tokens ?? 0, tokens.completion_tokens ?? 0, failed);
    const tracing = this.d.tracing;
    if (!tracing || !state.span) return;
    // The event is emitted when the call ends; it began latency_ms earlier.
    const end = this.d.clock.now();
    const attributes: Attributes = {
      [GEN_AI.operation]: 'chat',
      [GEN_AI.provider]: provider,
      [GEN_AI.system]: provider,
      [GEN_AI.requestModel]: model,
      [GEN_AI.inputTokens]: tokens.prompt_tokens ?? 0,
      [GEN_AI.outputTokens]: tokens.completion_tokens ?? 0,
      [GEN_AI.finishReasons]: [str(data.finish_reason)],
      'agentry.llm.iteration': num(data.iteration),
    };
    if (tracing.captureContent) {
      const io = data as { input?: { system: string; messages: { role: string; content: string }[] }; output?: { text: string; tool_calls: { name: string; arguments: string }[] } };
      if (io.input) {
        attributes[GEN_AI.systemInstructions] = JSON.stringify([{ type: 'text', content: io.input.system }]);
        attributes[GEN_AI.inputMessages] = JSON.stringify(io.input.messages.map((m) => ({ role: m.role, parts: [{ type: 'text', content: m.content }] })));
      }
      if (io.output) {
        const parts: object[] = [{ type: 'text', content: io.output.text }, ...io.output.tool_calls.map((c) => ({ type: 'tool_call', name: c.name, arguments: c.arguments }))];
        attributes[GEN_AI.outputMessages] = JSON.stringify([{ role: 'assistant', parts, finish_reason: str(data.finish_reason) }]);
      }
    }
    const span = tracing.tracer.startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, startTime: end - latencyMs, attributes }, trace.setSpan(context.active(), state.span));
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: str(data.error) });
    span.end(end);
  }

  private toolRequest(state: RunState, data: Record<string, unknown>): void {
    if (!this.d.metrics && !this.d.tracing) return;
    const id = str(data.tool_call_id);
    const name = str(data.tool_name);
    const span =
      this.d.tracing && state.span
        ? this.d.tracing.tracer.startSpan(
            `execute_tool ${name}`,
            { kind: SpanKind.INTERNAL, startTime: this.d.clock.now(), attributes: { [GEN_AI.operation]: 'execute_tool', [GEN_AI.toolName]: name, [GEN_AI.toolCallId]: id } },
            trace.setSpan(context.active(), state.span),
          )
        : undefined;
    (state.tools ??= new Map()).set(id, { span, started: this.d.clock.now() });
  }

  private toolResult(state: RunState, data: Record<string, unknown>): void {
    const id = str(data.tool_call_id);
    const open = state.tools?.get(id);
    if (!open) return;
    state.tools!.delete(id);
    const failed = data.is_error === true;
    this.d.metrics?.toolCall(failed, num(data.duration_ms) / 1000);
    if (open.span) {
      if (failed) open.span.setStatus({ code: SpanStatusCode.ERROR });
      open.span.end(this.d.clock.now());
    }
  }

  private finish(
    req: RunRequest,
    state: RunState,
    status: string,
    tokens: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined,
    provider: string | null,
    model: string | null,
    error: string | undefined,
  ): void {
    const end = this.d.clock.now();
    const durationMs = end - state.started;
    this.d.metrics?.taskFinished(req.agent.id, status, durationMs / 1000);
    // The one line a run leaves at info level: enough to follow the work without the trace.
    this.d.log.info(
      {
        task_id: req.task.id,
        agent_id: req.agent.id,
        organization_id: req.task.organization_id,
        attempt: req.task.execution_attempts,
        status,
        duration_ms: durationMs,
        tokens: tokens ?? null,
        llm_model_provider: provider,
        llm_model_name: model,
      },
      'task run ended',
    );
    for (const t of state.tools?.values() ?? []) t.span?.end(end);
    const span = state.span;
    if (!span) return;
    if (tokens) span.setAttributes({ [GEN_AI.inputTokens]: tokens.prompt_tokens, [GEN_AI.outputTokens]: tokens.completion_tokens });
    if (provider) span.setAttributes({ [GEN_AI.provider]: provider, [GEN_AI.requestModel]: model ?? '' });
    span.setAttribute('agentry.task.status', status);
    if (status !== 'completed') span.setStatus({ code: SpanStatusCode.ERROR, message: error?.slice(0, 500) });
    span.end(end);
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}
