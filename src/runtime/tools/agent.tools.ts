import type { Awaitable } from '../../lib/awaitable.js';
import { withPreAuth } from '../../auth/pre-auth-token.js';
import { FINAL_STATUSES, type Task, type TaskSubmitter } from '../../tasks/task.types.js';
import type { GraphItem, RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';
import { toolName } from './index.js';
import { raceAbort } from '../../lib/abort.js';

/**
 * Sub-agents (graph items of type `agent`): each becomes a tool that submits a child task (source `sub_agent`,
 * `parent_execution` = this task) through the tasks domain's TaskSubmitter and waits for it to finish. The child is
 * an ordinary task: queued, traced and retried like any other, and visible on its own.
 */

export interface SubAgentInfo {
  name: string;
  description: string;
}

export interface AgentToolProviderDeps {
  /** Resolved at call time: the tasks domain is built after the runtime in the container. */
  submitter: () => TaskSubmitter;
  /** Name and description of a sub-agent for the tool description; null when it no longer exists. */
  describe?: (organizationId: string, agentId: string) => Promise<SubAgentInfo | null>;
  /** Stops a child task when its parent is stopped (TaskControl.stop); absent: the child runs on. */
  stopTask?: (organizationId: string, taskId: string) => Promise<unknown>;
  /** How long one wait on the child lasts before checking the parent's signal again. */
  pollMs?: number;
  /** The longest the parent waits for a child; then the child is stopped and the call fails. Default 10 min. */
  maxWaitMs?: number;
}

/** The parent gave up waiting for the child. */
class SubAgentTimeout extends Error {
  constructor(taskId: string, ms: number) {
    super(`The sub-agent's task ${taskId} did not finish within ${Math.round(ms / 1000)} s; it was stopped`);
    this.name = 'SubAgentTimeout';
  }
}

const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    input: { type: 'string', description: 'The complete request for the sub-agent: it sees nothing else of this conversation.' },
    additional_context: { type: 'string', description: 'Optional background the sub-agent should know.' },
  },
  required: ['input'],
  additionalProperties: false,
};

export class AgentToolProvider implements RuntimeToolProvider {
  constructor(private readonly deps: AgentToolProviderDeps) {}

  buildTools(agent: RunContextAgent, ctx: ToolCallContext): Awaitable<RuntimeTool[]> {
    const items = agent.graph.filter((g) => g.type === 'agent');
    if (!items.length) return [];
    return Promise.all(items.map((item) => this.toolFor(item, ctx)));
  }

  private async toolFor(item: GraphItem, ctx: ToolCallContext): Promise<RuntimeTool> {
    const info = (await this.deps.describe?.(ctx.organizationId, item.item_id)) ?? null;
    const name = info?.name ?? item.name ?? item.item_id;
    const about = info?.description ? ` ${info.description}` : '';
    return {
      name: toolName(`agent_${name}`, `agent_${item.item_id.slice(0, 8)}`),
      description: `Delegate a task to the sub-agent "${name}" and get its answer.${about}`,
      inputSchema: INPUT_SCHEMA,
      // The sub-agent runs with its own settings: an unsupervised one makes its mutating calls (POST, PUT, ...) without
      // asking. Under a supervised manager, delegating is therefore approved first, like a workflow tool call
      // (docs/contract.md#supervision); an unsupervised manager is not affected.
      mutating: true,
      graphItemId: item.id ?? item.item_id,
      execute: (args, callCtx) => this.delegate(item.item_id, args, callCtx),
    };
  }

  /** Runs `agentId` as a child task of ctx's task and resolves with its result (also used by workflows' agent steps). */
  async delegate(agentId: string, args: Record<string, unknown>, ctx: ToolCallContext): Promise<unknown> {
    if (agentId === ctx.agentId) throw new Error('An agent cannot delegate to itself');
    const submitter = this.deps.submitter();
    const child = await submitter.submit({
      organizationId: ctx.organizationId,
      agentId,
      source: 'sub_agent',
      text: String(args.input ?? ''),
      additionalContext: typeof args.additional_context === 'string' ? args.additional_context : null,
      parentExecution: ctx.taskId,
      callDepth: (ctx.callDepth ?? 0) + 1,
      parentAgentId: ctx.agentId,
      userTokens: withPreAuth(ctx.userTokens, ctx.preAuthToken),
      // The child acts for the same person: its trace shows the user, and their stored MCP tokens apply.
      user: ctx.userId ? { id: ctx.userId } : null,
      awaited: true,
    });
    await ctx.emit('sub_agent_trigger', { agent_id: agentId, task_id: child.id, tool_call_id: ctx.toolCallId ?? null, input: args.input });
    let done: Task;
    try {
      // Waiting uses no CPU: the worker may run other tasks (this child among them) in this run's slot meanwhile.
      const waiting = this.waitForChild(submitter, child, ctx.signal);
      done = await (ctx.parkWhile ? ctx.parkWhile(waiting) : waiting);
    } catch (e) {
      // The parent was stopped or gave up: nobody is waiting for the child's answer any more.
      if ((ctx.signal.aborted || e instanceof SubAgentTimeout) && this.deps.stopTask) {
        await this.deps.stopTask(ctx.organizationId, child.id).catch(() => undefined);
      }
      throw e;
    }
    if (done.status !== 'completed') {
      throw new Error(`The sub-agent's task ${done.id} ended "${done.status}"${done.result ? `: ${done.result}` : ''}`);
    }
    return done.result ?? '';
  }

  /** Waits in slices so the parent's stop also ends the wait (a paused child, awaiting a person, is waited for). */
  private async waitForChild(submitter: TaskSubmitter, child: Task, signal: AbortSignal): Promise<Task> {
    let task = child;
    const slice = this.deps.pollMs ?? 30_000;
    const maxWait = this.deps.maxWaitMs ?? 600_000;
    // Bounded: with every worker slot held by waiting parents, a child could otherwise never be claimed.
    const deadline = Date.now() + maxWait;
    while (!FINAL_STATUSES.has(task.status)) {
      signal.throwIfAborted();
      if (Date.now() >= deadline) throw new SubAgentTimeout(child.id, maxWait);
      // waitForFinal answers at once for a paused task: pace those checks instead of spinning.
      if (task.status === 'paused') await raceAbort(new Promise((r) => setTimeout(r, Math.min(slice, 1000))), signal);
      const wait = Math.max(1, Math.min(slice, deadline - Date.now()));
      task = await raceAbort(submitter.waitForFinal(child.organization_id, child.id, { timeoutMs: wait }), signal);
    }
    return task;
  }
}
