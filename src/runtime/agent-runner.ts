import { isPromise } from '../lib/awaitable.js';
import type { ModelMessage } from 'ai';
import { isoTime, type Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { MissingCredentialsError } from '../llm/credentials.js';
import { ProviderConfigError } from '../llm/llm-providers.js';
import type { LlmService } from '../llm/llm.service.js';
import { ORCHESTRATION_KINDS, type RunContextAgent, type RuntimeTool, type ToolCallContext } from '../tools/tool-kinds.js';
import type { ContextContributorRegistry } from './context-contributors.js';
import { GuardrailRefusal } from '../guardrails/guardrail.types.js';
import type { GuardrailService } from '../guardrails/guardrails.service.js';
import { guardPrompt } from './guarded-prompt.js';
import { nextRunNumber } from './history.js';
import { buildHistoryContext, historySettings } from './history-context.js';
import type { RunHooks } from './run-hooks.js';
import { compressionSettings, ToolResultCompressor } from './tool-result-compression.js';
import { JsonSchemaValidator } from './json-output.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import { LlmCallError } from './llm-step.js';
import { buildSystemPrompt, buildUserMessage, outputSpec } from './prompt.js';
import { runLimits } from './run-settings.js';
import { RunAbortedError, type RunOutcome, type RunRequest, type TaskRunner } from './task-runner.js';
import { addTokens, runToolLoop, type RunState } from './tool-loop.js';
import { ToolBuildError, type RuntimeToolRegistry } from './tools/index.js';
import { splitPreAuth } from '../auth/pre-auth-token.js';
import { GraphChain } from './graph-chain.js';
import { planFromEvent, planningSettings, PlanTracker, type Plan } from './planning.js';
import type { ToolGate } from './tool-gates.js';

export interface AgentRunnerDeps {
  llm: LlmService;
  tools: RuntimeToolRegistry;
  context: ContextContributorRegistry;
  clock: Clock;
  log: Logger;
  /** Checks output_schema and tool arguments off the main thread. */
  schemaChecker: SchemaChecker;
  /** The agno_settings guardrails: PII, prompt injection, moderation. */
  guardrails: GuardrailService;
  /** Session summaries' store and the observers of finished runs (memory). */
  hooks: RunHooks;
  /** The data of the task's latest trace event of a type: deep planning resumes an interrupted attempt's plan from it. */
  lastEventData?: (organizationId: string, taskId: string, type: 'plan') => Promise<Record<string, unknown> | null>;
}

/**
 * The TaskRunner of the worker: builds the prompt (instructions, expected output, context, history, attachments),
 * resolves the model and its credentials, offers the agent's tools, and runs the tool loop.
 */
export class AgentRunner implements TaskRunner {
  constructor(private readonly deps: AgentRunnerDeps) {}

  async run(req: RunRequest): Promise<RunOutcome> {
    const outcome = await this.runOnce(req);
    this.deps.hooks.notify(req, outcome);
    return outcome;
  }

  private async runOnce(req: RunRequest): Promise<RunOutcome> {
    const { task, agent, extras } = req;
    const now = () => this.deps.clock.now();
    // The worker gives the run's number: its history holds only the runs this agent reads (src/tasks/thread-history.ts).
    const runNumber = req.run ?? nextRunNumber(req.history);
    const userText = buildUserMessage(task.input, false);
    const state: RunState = {
      tokens: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      thread: [{ role: 'user', content: userText, created_at: isoTime(now()), run: runNumber }],
    };

    let provider: string | null = null;
    let modelName: string | null = null;
    const outcome = (status: RunOutcome['status'], result: string): RunOutcome => ({
      status,
      result,
      tokens: state.tokens,
      messages: state.thread,
      llm_model_provider: provider,
      llm_model_name: modelName,
    });

    try {
      const id = this.deps.llm.identify(agent);
      provider = id.provider;
      modelName = id.modelName;
      // The verified end-user token (OIDC pre-auth) is the run's, not a tool's: out of user_tokens, into its own slot.
      const { tokens: userTokens, preAuthToken } = splitPreAuth(extras.userTokens);
      const resolved = await this.deps.llm.resolve(agent, agent.use_oidc_pre_auth_token_for_llm ? preAuthToken : undefined);

      const runAgent = asRunContextAgent(agent);
      const toolCtx: ToolCallContext = {
        organizationId: task.organization_id,
        taskId: task.id,
        agentId: agent.id,
        signal: req.signal,
        userTokens,
        preAuthToken,
        userId: task.user_id ?? task.input.user?.id ?? undefined,
        emit: req.emit,
        callDepth: task.call_depth,
        parkWhile: req.parkWhile,
      };
      const toolsBuilt = this.deps.tools.buildTools(runAgent, toolCtx);
      const sectionsBuilt = this.deps.context.collect({ agent: runAgent, task, signal: req.signal });
      // Both are usually ready at once (src/lib/awaitable.ts).
      const [tools, sections] = isPromise(toolsBuilt) || isPromise(sectionsBuilt) ? await Promise.all([toolsBuilt, sectionsBuilt]) : [toolsBuilt, sectionsBuilt];

      const gates: ToolGate[] = [];
      const planning = await this.planTracker(req, runNumber, tools);
      if (planning) {
        tools.push(...planning.tools());
        sections.push(...planning.promptSections());
        gates.push(planning);
      }
      const chain = new GraphChain(runAgent.graph, tools);
      if (chain.active) gates.push(chain);

      const output = outputSpec(task, agent);
      const limits = runLimits(agent);
      const call = { model: resolved.model, provider: resolved.provider, modelName: resolved.modelName, providerOptions: resolved.providerOptions };
      const guard = this.deps.guardrails.forRun({ agent, signal: req.signal, report: (e) => req.emit('guardrail', e) });
      const history = await buildHistoryContext({
        req,
        settings: historySettings(agent, limits.numHistoryRuns),
        store: this.deps.hooks.summaries,
        call,
        now,
        log: this.deps.log,
        guard,
      });
      state.tokens = addTokens(state.tokens, history.tokens);
      // The summary is earlier conversation: screened by the guards like the replayed turns.
      if (history.summary) sections.unshift({ title: 'Summary of the earlier conversation', text: history.summary, guardOrigin: 'history' });
      const compression = compressionSettings(agent);
      const compressor = compression ? new ToolResultCompressor(compression, call, req, now, this.deps.log) : undefined;
      const prompt = await guardPrompt(guard, {
        task,
        sections,
        history: history.messages,
        injectAttachments: !extras.disableAttachmentInjection,
      });
      const system = buildSystemPrompt({
        agent,
        task: prompt.task,
        instructionsOverride: extras.instructionsOverride,
        expectedOutput: extras.expectedOutput,
        output,
        sections: prompt.sections,
        now: now(),
      });
      const messages: ModelMessage[] = [...prompt.history, { role: 'user', content: prompt.userMessage }];

      this.deps.llm.reportRetries(req.signal, (r) =>
        this.deps.log.warn({ task_id: task.id, provider, status: r.status, attempt: r.attempt, delay_ms: r.delayMs }, 'LLM call retried'),
      );
      const r = await runToolLoop(
        {
          model: resolved.model,
          provider: resolved.provider,
          modelName: resolved.modelName,
          providerOptions: resolved.providerOptions,
          system,
          messages,
          tools,
          limits,
          output,
          supervised: agent.is_supervised,
          toolCtx,
          req,
          run: runNumber,
          now,
          validator: new JsonSchemaValidator(this.deps.schemaChecker, task.organization_id),
          guard,
          gates,
          beforeStep: compressor && ((m) => compressor.apply(m)),
          autoContext: agent.with_auto_context_management,
        },
        state,
      );
      if (compressor) state.tokens = addTokens(state.tokens, compressor.tokens);
      return outcome(r.status, r.result);
    } catch (e) {
      if (req.signal.aborted) throw new RunAbortedError(state.tokens, state.thread, req.signal.reason);
      if (e instanceof MissingCredentialsError || e instanceof ProviderConfigError || e instanceof LlmCallError || e instanceof ToolBuildError || e instanceof GuardrailRefusal) {
        return outcome('error', e.message);
      }
      throw e;
    }
  }

  /** Deep planning's tracker for this run, with the plan an earlier attempt of the same run left in the trace. */
  private async planTracker(req: RunRequest, run: number, tools: RuntimeTool[]): Promise<PlanTracker | undefined> {
    const settings = planningSettings(req.agent);
    if (!settings) return undefined;
    const { task } = req;
    let restored: Plan | undefined;
    // A plan event of this very run can only come from an earlier attempt of it (a crash, a shutdown hand-back, the
    // retry strategy): a continued conversation's new run has a higher number and starts without a plan.
    if (this.deps.lastEventData) {
      const data = await this.deps.lastEventData(task.organization_id, task.id, 'plan');
      if (data && data.run === run) restored = planFromEvent(data);
    }
    const tracker = new PlanTracker({
      settings,
      emit: (data) => req.emit('plan', data),
      run,
      attempt: task.execution_attempts,
      restored,
      taken: new Set(tools.map((t) => t.name)),
    });
    await tracker.announceRestored();
    return tracker;
  }
}

/**
 * The agent the tool providers and context contributors see. The configuration is complete (agents/agent-config.ts),
 * so the usual case is the agent itself, uncopied (a copy cost ~40 µs a run, profiled).
 */
function asRunContextAgent(agent: RunRequest['agent']): RunContextAgent {
  // A `regular` agent has no orchestration (spec 2.2): a row stored before that rule keeps its sub-agent and
  // workflow items, which are not offered.
  if (agent.type === 'regular' && agent.graph.some((g) => ORCHESTRATION_KINDS.has(g.type))) {
    return { ...agent, graph: agent.graph.filter((g) => !ORCHESTRATION_KINDS.has(g.type)), tools: agent.tools.filter((e) => !ORCHESTRATION_KINDS.has(e.type)) };
  }
  return agent;
}
