import type { Principal } from '../../auth/principal.js';
import type {
  AgentCard,
  CancelTaskRequest,
  GetTaskRequest,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task as A2aTask,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { A2AError, PushNotificationNotSupportedError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { isAppError, logOperatorDetail } from '../../errors.js';
import type { Logger } from '../../lib/logger.js';
import { isValidTaskId } from '../../tasks/task-ids.js';
import { FINAL_STATUSES, type Task } from '../../tasks/task.types.js';
import type { TaskParts } from '../../tasks/tasks.module.js';
import { partsText } from '../a2a-messages.js';
import { toA2aTask, toStreamResponses } from './a2a-tasks.js';

export interface InboundTarget {
  organizationId: string;
  agentId: string;
  card: AgentCard;
  /** The HTTP client went away: a blocking message/send stops waiting (the task runs on). */
  clientGone?: AbortSignal;
  /** The authenticated caller: task submission checks its access to the agent (personal scope, OIDC pre-auth). */
  caller?: Principal;
  /** The end user's token for a use_oidc_pre_auth agent. */
  userToken?: string;
  /** Agent calls that led to this request (src/tasks/call-depth.ts). */
  callDepth?: number;
}

export interface A2aHandlerDeps {
  /** message/send and stream submit; tasks/get and resubscribe read; tasks/cancel stops. */
  tasks: TaskParts;
  /** How long a blocking message/send waits for the run (AGENTRY_SYNC_TIMEOUT_MS); the task as it is then. */
  syncTimeoutMs: number;
  log: Logger;
}

/** The longest text a message may carry: the same bound as an invocation's input. */
const MAX_TEXT_CHARS = 1_000_000;

/**
 * The A2A request handler of one Agentry agent, for one call: the SDK's JSON-RPC transport handlers (v1.0 and v0.3)
 * parse and answer the protocol, and every method lands here, on the task engine's parts. Runs are ordinary tasks with
 * `source` `a2a`, so the task table is the A2A task store: `tasks/get` and `tasks/cancel` work from any process.
 */
export class AgentryA2aHandler implements A2ARequestHandler {
  constructor(
    private readonly deps: A2aHandlerDeps,
    private readonly target: InboundTarget,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.target.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return this.target.card;
  }

  sendMessage(params: SendMessageRequest): Promise<Message | A2aTask> {
    return this.guard(async () => {
      const blocking = !params.configuration?.returnImmediately;
      const task = await this.deps.tasks.submissions.submit({ ...this.submission(params), awaited: blocking });
      if (!blocking) return toA2aTask(task);
      return toA2aTask(await this.deps.tasks.submissions.waitForFinal(this.target.organizationId, task.id, { timeoutMs: this.deps.syncTimeoutMs, signal: this.target.clientGone, subExecutions: false, submitted: task }));
    });
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const { task, cursor } = await this.guard(() => this.deps.tasks.submissions.enqueue({ ...this.submission(params), awaited: true }));
    yield { payload: { $case: 'task', value: toA2aTask(task) } };
    yield* this.follow(task.id, cursor);
  }

  getTask(params: GetTaskRequest): Promise<A2aTask> {
    return this.guard(async () => toA2aTask(await this.ownTask(params.id)));
  }

  cancelTask(params: CancelTaskRequest): Promise<A2aTask> {
    return this.guard(async () => {
      const t = await this.ownTask(params.id);
      if (FINAL_STATUSES.has(t.status) && t.status !== 'stopped') throw new TaskNotCancelableError(`Task ${t.id} is already ${t.status}`);
      return toA2aTask(await this.deps.tasks.control.stop(this.target.organizationId, t.id));
    });
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const t = await this.guard(() => this.ownTask(params.id));
    yield { payload: { $case: 'task', value: toA2aTask(t) } };
    if (!FINAL_STATUSES.has(t.status)) yield* this.follow(t.id, 0);
  }

  async listTasks(): Promise<never> {
    throw new UnsupportedOperationError('ListTasks is not supported; use GET /v1/agents/{agent_id}/tasks');
  }

  async createTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw new PushNotificationNotSupportedError('Push notifications are not supported; use message/stream or tasks/get');
  }
  async getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw new PushNotificationNotSupportedError();
  }
  async listTaskPushNotificationConfigs(): Promise<never> {
    throw new PushNotificationNotSupportedError();
  }
  async deleteTaskPushNotificationConfig(): Promise<void> {
    throw new PushNotificationNotSupportedError();
  }

  /** The A2A message as a submission: a message's task id, else its context id, names the conversation to continue. */
  private submission(params: SendMessageRequest) {
    const m = params.message;
    if (!m) throw new RequestMalformedError('message is required');
    const text = partsText(m.parts).trim();
    if (!text) throw new RequestMalformedError('the message has no text part');
    if (text.length > MAX_TEXT_CHARS) throw new RequestMalformedError(`the message is longer than ${MAX_TEXT_CHARS} characters`);
    const conversation = m.taskId || m.contextId || undefined;
    if (conversation !== undefined && !isValidTaskId(conversation)) throw new RequestMalformedError('taskId and contextId must be 1-128 printable characters');
    return { organizationId: this.target.organizationId, agentId: this.target.agentId, taskId: conversation, source: 'a2a' as const, text, user: null, caller: this.target.caller, userToken: this.target.userToken, callDepth: this.target.callDepth };
  }

  /** A task of this agent; another agent's (or organization's) task is as missing as one that never existed. */
  private async ownTask(id: string): Promise<Task> {
    if (!id || !isValidTaskId(id)) throw new TaskNotFoundError(`Task ${id} not found`);
    const t = await this.deps.tasks.queries.get(this.target.organizationId, id).catch((e) => {
      if (isAppError(e) && e.code === 'not_found') throw new TaskNotFoundError(`Task ${id} not found`);
      throw e;
    });
    if (t.agent_id !== this.target.agentId) throw new TaskNotFoundError(`Task ${id} not found`);
    return t;
  }

  private async *follow(taskId: string, cursor: number): AsyncGenerator<StreamResponse, void, undefined> {
    const abort = new AbortController();
    try {
      for await (const e of this.deps.tasks.queries.follow(this.target.organizationId, taskId, cursor, abort.signal)) {
        for (const r of toStreamResponses(e)) yield r;
        if (e.type === 'task_finished') return;
      }
    } finally {
      // The client went away (the transport stopped reading): stop following, the task runs on.
      abort.abort();
    }
  }

  /** Our errors in the protocol's words: an AppError's message is meant for callers; anything else is not shown. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof A2AError) throw e;
      logOperatorDetail(this.deps.log, e, { agent_id: this.target.agentId });
      if (isAppError(e)) throw e.code === 'not_found' ? new TaskNotFoundError(e.message) : new RequestMalformedError(e.message);
      this.deps.log.error({ err: e, agent_id: this.target.agentId }, 'A2A request failed');
      throw new Error('Internal error');
    }
  }
}
