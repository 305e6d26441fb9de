import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Role, TaskState, type AgentCard, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import type { RunOutcome, RunRequest, TaskRunner } from '../runtime/task-runner.js';
import { INTERRUPTED_STATES, isTask, message, partsText, stateName, taskAnswer, TERMINAL_STATES } from './a2a-messages.js';
import { ConnectivityError, parseConnectivity, type A2aConnectivity } from './connectivity.js';
import { aborted, contextText, describeFailure, invocationContext, outcome, outputProblem, promptOf, RemoteAgentError, remoteHeaders, runFetch, runSignal, traced, type Fetch, type SecretReader } from './remote-call.js';

export interface A2aRunnerDeps {
  /**
   * The egress-checked fetch (docs/contract.md#egress): the SDK's card resolver and transports take it as `fetchImpl`.
   */
  fetch: Fetch;
  secrets: SecretReader;
  clock: Clock;
  log: Logger;
  schemaChecker: SchemaChecker;
  /** Polling of a task the remote agent runs on: first delay, then doubling up to the maximum. */
  poll?: { firstMs: number; maxMs: number };
}

/** How long a stopped task's cancel request may take: the worker gives an aborted run 2 s (task.worker.ts). */
const CANCEL_TIMEOUT_MS = 1500;

/** What a run learned about the remote task, for the outcome and for cancelling it. */
interface RemoteState {
  taskId?: string;
  state?: TaskState;
  answer: string;
}

/**
 * `a2a` agents: the task goes to the remote agent with the A2A protocol through the protocol's SDK (JSON-RPC or
 * HTTP+JSON, v1.0, or v0.3 through its compat layer): agent card discovery, then `message/stream` when the card
 * says it streams, else `message/send` without blocking and `tasks/get` polling. Each remote call is a trace step;
 * stopping the task cancels the remote task (`tasks/cancel`).
 */
export class A2aAgentRunner implements TaskRunner {
  private readonly poll: { firstMs: number; maxMs: number };

  constructor(private readonly deps: A2aRunnerDeps) {
    this.poll = deps.poll ?? { firstMs: 250, maxMs: 5000 };
  }

  async run(req: RunRequest): Promise<RunOutcome> {
    const { clock } = this.deps;
    const prompt = promptOf(req);
    const remote: RemoteState = { answer: '' };
    let c: A2aConnectivity | undefined;
    let headers: Record<string, string> = {};
    let card: AgentCard | undefined;
    let fetch: ReturnType<typeof runFetch> | undefined;
    let signal: AbortSignal | undefined;
    try {
      c = parseConnectivity('a2a', req.agent.connectivity_details);
      headers = await remoteHeaders(c, req.task, this.deps.secrets);
      signal = runSignal(req.signal, c.timeout_seconds);
      fetch = runFetch(this.deps.fetch, headers, signal);
      const conn = c;
      const f = fetch;
      const found = await traced(req, clock, { name: 'a2a agent card', payload: { url: cardUrl(conn) } }, async () => {
        const resolved = await new DefaultAgentCardResolver({ fetchImpl: f, legacyCompat: { enabled: true } }).resolve(cardUrl(conn), '');
        return { card: resolved, status: 'ok', result: { name: resolved.name, streaming: resolved.capabilities?.streaming === true } };
      });
      card = found.card;
      const client = await clientFor(card, fetch);
      const params: SendMessageRequest = {
        tenant: '',
        // The invocation's context goes with the prompt: as a second text part every agent reads, and structured as
        // the message's metadata for agents that look for it (docs/external-agents.md#context).
        message: message(Role.ROLE_USER, prompt, { messageId: newId(), contextId: contextFor(req) }, ...withContext(invocationContext(req))),
        configuration: { acceptedOutputModes: ['text/plain', 'application/json'], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      };
      if (card.capabilities?.streaming) {
        await this.stream(req, client, params, remote);
        // A stream that ended before the task did (a proxy, a restart): follow the task by polling.
        if (remote.taskId && !isSettledState(remote.state)) remote.answer = taskAnswer(await this.pollTask(req, client, remote.taskId, remote, signal));
      } else await this.sendAndPoll(req, client, params, remote, signal);
      return await this.finish(req, remote, prompt);
    } catch (e) {
      if (req.signal.aborted) {
        if (card && c && remote.taskId && !(remote.state !== undefined && TERMINAL_STATES.has(remote.state))) await this.cancel(card, headers, remote.taskId, req);
        throw aborted(req, clock, prompt);
      }
      if (e instanceof ConnectivityError) return outcome(req, clock, 'error', e.message, prompt);
      return outcome(req, clock, 'error', describeFailure(e, 'A2A', c?.timeout_seconds ?? 0, fetch?.lastStatus, signal?.aborted === true), prompt);
    }
  }

  private async stream(req: RunRequest, client: Client, params: SendMessageRequest, remote: RemoteState): Promise<void> {
    const artifacts = new Map<string, string>();
    let statusText = '';
    await traced(req, this.deps.clock, { name: 'a2a message/stream', payload: { context_id: params.message?.contextId } }, async () => {
      for await (const ev of client.sendMessageStream(params)) {
        const p = ev.payload;
        if (!p) continue;
        if (p.$case === 'message') {
          remote.answer = partsText(p.value.parts);
          remote.state = TaskState.TASK_STATE_COMPLETED;
        } else if (p.$case === 'task') {
          remote.taskId = p.value.id;
          remote.state = p.value.status?.state;
          const text = taskAnswer(p.value);
          if (text) statusText = text;
        } else if (p.$case === 'statusUpdate') {
          remote.taskId ||= p.value.taskId;
          remote.state = p.value.status?.state;
          const text = partsText(p.value.status?.message?.parts);
          if (text) statusText = text;
        } else if (p.$case === 'artifactUpdate' && p.value.artifact) {
          const a = p.value.artifact;
          const text = partsText(a.parts);
          const before = artifacts.get(a.artifactId);
          artifacts.set(a.artifactId, p.value.append ? (before ?? '') + text : text);
          // New text only: an artifact sent again whole (append false) replaces what its chunks already said.
          if (text && (p.value.append || before === undefined)) await req.emit('chunk', { text, remote_task_id: p.value.taskId || null });
        }
      }
      if (remote.state === undefined) throw new RemoteAgentError('The A2A agent ended its stream without a task or a message');
      const fromArtifacts = [...artifacts.values()].filter(Boolean).join('\n');
      if (!remote.answer) remote.answer = remote.state === TaskState.TASK_STATE_COMPLETED ? fromArtifacts || statusText : statusText || fromArtifacts;
      return { status: stateName(remote.state), remoteTaskId: remote.taskId, result: remote.answer.slice(0, 2000) };
    });
  }

  private async sendAndPoll(req: RunRequest, client: Client, params: SendMessageRequest, remote: RemoteState, signal: AbortSignal): Promise<void> {
    const { clock } = this.deps;
    const sent = await traced(req, clock, { name: 'a2a message/send', payload: { context_id: params.message?.contextId } }, async () => {
      const r = await client.sendMessage(params);
      return isTask(r)
        ? { task: r as Task, status: stateName(r.status?.state), remoteTaskId: r.id }
        : { text: partsText(r.parts), status: 'message', result: partsText(r.parts).slice(0, 2000) };
    });
    if (!('task' in sent) || !sent.task) {
      remote.answer = sent.text ?? '';
      remote.state = TaskState.TASK_STATE_COMPLETED;
      return;
    }
    remote.taskId = sent.task.id;
    remote.state = sent.task.status?.state;
    const task = isSettledState(remote.state) ? sent.task : await this.pollTask(req, client, sent.task.id, remote, signal);
    remote.answer = taskAnswer(task);
  }

  /** `tasks/get` until the remote task is final or waits for the caller; every call a trace step. */
  private async pollTask(req: RunRequest, client: Client, taskId: string, remote: RemoteState, signal: AbortSignal): Promise<Task> {
    for (let delay = this.poll.firstMs; ; delay = Math.min(delay * 2, this.poll.maxMs)) {
      await sleep(delay, undefined, { signal });
      const got = await traced(req, this.deps.clock, { name: 'a2a tasks/get', payload: { task_id: taskId } }, async () => {
        const t = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
        return { task: t, status: stateName(t.status?.state), remoteTaskId: t.id };
      });
      remote.state = got.task.status?.state;
      if (isSettledState(remote.state)) return got.task;
    }
  }

  private async finish(req: RunRequest, remote: RemoteState, prompt: string): Promise<RunOutcome> {
    const { clock } = this.deps;
    const state = remote.state;
    if (state === TaskState.TASK_STATE_FAILED || state === TaskState.TASK_STATE_REJECTED) {
      return outcome(req, clock, 'failed', `The A2A agent reported the task ${stateName(state)}${remote.answer ? `: ${remote.answer}` : ''}`, prompt);
    }
    if (state === TaskState.TASK_STATE_CANCELED) return outcome(req, clock, 'error', `The A2A agent canceled the task${remote.answer ? `: ${remote.answer}` : ''}`, prompt);
    // Completed, or interrupted (input or authentication required): the agent's words are the answer; a follow-up
    // invocation of the same task id continues the same remote context.
    const problem = await outputProblem(req, remote.answer, this.deps.schemaChecker);
    return outcome(req, clock, problem ? 'failed' : 'completed', problem ?? remote.answer, prompt);
  }

  /** Best effort: the run is over either way; a remote agent that cannot cancel is logged, not fatal. */
  private async cancel(card: AgentCard, headers: Record<string, string>, taskId: string, req: RunRequest): Promise<void> {
    try {
      const client = await clientFor(card, runFetch(this.deps.fetch, headers, AbortSignal.timeout(CANCEL_TIMEOUT_MS)));
      await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
      this.deps.log.info({ task_id: req.task.id, remote_task_id: taskId }, 'remote A2A task canceled');
    } catch (err) {
      this.deps.log.warn({ task_id: req.task.id, remote_task_id: taskId, err: (err as Error).message }, 'could not cancel the remote A2A task');
    }
  }
}

/** The card's address: `agent_card_path` appended to `url` (the SDK resolves a path against the origin, losing a base path). */
export function cardUrl(c: A2aConnectivity): string {
  const path = c.agent_card_path ?? '/.well-known/agent-card.json';
  if (!path) return c.url;
  return `${c.url.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

function isSettledState(s: TaskState | undefined): boolean {
  return s !== undefined && (TERMINAL_STATES.has(s) || INTERRUPTED_STATES.has(s));
}

function clientFor(card: AgentCard, fetchImpl: Fetch): Promise<Client> {
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
    // We poll ourselves (tasks/get), so a long task never holds one HTTP request open for its whole run.
    clientConfig: { polling: true },
  });
  return factory.createFromAgentCard(card);
}

/**
 * The remote context of this conversation: the same for every run of one task (a continued conversation stays one
 * remote context), opaque, and never the same for two organizations or agents that picked the same task id.
 */
function contextFor(req: RunRequest): string {
  const h = createHash('sha256').update(`${req.task.organization_id}\u0000${req.agent.id}\u0000${req.task.id}`).digest('hex');
  return `agentry-${h.slice(0, 32)}`;
}

function withContext(ctx: Record<string, unknown>): [string[], Record<string, unknown> | undefined] {
  const text = contextText(ctx);
  return [text ? [text] : [], Object.keys(ctx).length ? ctx : undefined];
}
