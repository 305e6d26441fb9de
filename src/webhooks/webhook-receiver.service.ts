import type { AuthService } from '../auth/auth.service.js';
import { canSeeAgent } from '../auth/agent-access.js';
import type { Principal } from '../auth/principal.js';
import type { RateLimits } from '../auth/rate-limiter.js';
import { roleAllows, roleRefusal } from '../auth/roles.js';
import { AppError } from '../errors.js';
import type { FilesService, IncomingFile, StoredFile } from '../files/files.service.js';
import type { Logger } from '../lib/logger.js';
import type { Task, TaskSubmission, TaskSubmitter } from '../tasks/task.types.js';
import { readPath } from '../lib/dot-path.js';
import type { WebhookAgent, WebhookAgentDirectory } from './webhook-agents.js';
import { publicLookupUnavailable, type WebhookChannelsService } from './webhook-channels.service.js';
import { parseWebhookParams, type WebhookForm, type WebhookParams } from './webhook-params.js';

/** One inbound call, as the HTTP layer hands it over: parsed, files buffered within the size limits. */
export interface WebhookCall {
  form: WebhookForm;
  /** Public form: the secret from the path. */
  secret?: string;
  /** Public form: the secret already resolved by `resolvePublic` (the HTTP layer does it before reading the body). */
  bound?: PublicBinding;
  /** Key form: `x-api-key` from the header or the query string. */
  apiKey?: string;
  /** Key form: that key as `precheckKey` found it (the HTTP layer checks it before reading the body), not checked again. */
  caller?: Principal;
  /** The end user's token (`x-user-token`, or `Authorization: Bearer`), for `use_oidc_pre_auth` agents. */
  userToken?: string;
  /** From the x-agentry-call-depth header (src/tasks/call-depth.ts). */
  callDepth?: number;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  files: IncomingFile[];
}

export interface PublicBinding {
  organizationId: string;
  agentId: string;
}

/** `started`: the asynchronous answer; its task id goes out in the `x-task-id` header (the body is fixed, spec 4.3). */
export type WebhookAnswer = { kind: 'started'; taskId: string } | { kind: 'result'; value: unknown };

/** Spec 2.7: the synchronous answer. */
export interface WebhookTaskResult {
  id: string;
  agent_id: string;
  status: string;
  result: unknown;
  created_at: string;
  finished_at: string | null;
  source: string;
  execution_attempts: number;
}

/** A call without files: no uploads, no task id drawn for them. */
const NO_UPLOADS: { stored: StoredFile[]; newTaskId?: string } = Object.freeze({ stored: [] });

/**
 * The webhook receiver (spec 4.3-4.5, 7.2; docs/contract.md#webhooks): authenticates the call, resolves its parameters,
 * stores its files and submits the task. Nothing is stored for a refused call; an asynchronous call is answered
 * only once its task and files are committed.
 */
export class WebhookReceiver {
  constructor(
    private readonly channels: WebhookChannelsService,
    private readonly agents: WebhookAgentDirectory,
    private readonly auth: AuthService,
    private readonly files: FilesService,
    private readonly tasks: TaskSubmitter,
    private readonly syncTimeoutMs: number,
    private readonly log: Logger,
    /** Per public URL and per key (docs/access.md); absent: no limits. */
    private readonly limits?: RateLimits,
  ) {}

  async invoke(call: WebhookCall): Promise<WebhookAnswer> {
    const authenticating = this.authenticate(call);
    const { organizationId, agentId, agent } = authenticating instanceof Promise ? await authenticating : authenticating;
    const params = parseWebhookParams(call.form, call.query, call.body);
    if (params.prompt === undefined && !call.files.length && !params.context) {
      throw AppError.validation([{ loc: ['body', 'prompt'], msg: 'Field required', type: 'missing' }]);
    }
    // Most calls carry no files: no awaits for nothing on the accept's path.
    const { stored, newTaskId } = call.files.length ? await this.files.ingestForTask(organizationId, call.files, params.taskId) : NO_UPLOADS;
    const submission: TaskSubmission = {
      organizationId,
      agentId,
      agent,
      taskId: params.taskId,
      newTaskId,
      source: 'webhook',
      text: params.prompt ?? '',
      files: stored.map((f) => this.files.toTaskFile(f)),
      user: params.user,
      additionalContext: params.context ? JSON.stringify(params.context) : null,
      userTokens: params.userTokens,
      userToken: call.userToken,
      callDepth: call.callDepth,
      disableAttachmentInjection: params.disableAttachmentInjection,
      awaited: !params.asynchronous,
      callbackUrl: params.callbackUrl,
      // The call has the body and query a selector reads: no object of its own per accepted call.
      dedupSource: call,
    };
    let task: Task | undefined;
    let acceptedId: string | undefined;
    try {
      // An asynchronous caller is not given the task: it may wait in the task inbox (the cheapest durable write).
      if (params.asynchronous) acceptedId = await this.tasks.accept(submission);
      else task = await this.tasks.submit(submission);
    } catch (e) {
      await this.discard(organizationId, stored);
      throw e;
    }
    // A duplicate event (duplication_prevention) is answered with the earlier event's task: its uploads serve nothing.
    if (stored.length && (task?.id ?? acceptedId) !== (params.taskId ?? newTaskId)) await this.discard(organizationId, stored);
    if (!task) return { kind: 'started', taskId: acceptedId! };
    // The synchronous answer (spec 2.7) shows no sub-executions.
    const final = await this.tasks.waitForFinal(organizationId, task.id, { timeoutMs: this.syncTimeoutMs, subExecutions: false, submitted: task });
    return { kind: 'result', value: present(final, params) };
  }

  /**
   * The agent a public URL is bound to; 401 for an unknown, regenerated or revoked URL (spec 7.2), 503 when the
   * lookup fails. Needs nothing from the body, so a dead URL is refused before its body is read.
   */
  resolvePublic(secret: string | undefined): PublicBinding | Promise<PublicBinding> {
    // A busy URL is answered from memory: its binding cached and current, a leased rate-limit token at hand (the
    // limiter answers synchronously then). Every accepted call starts here; the lookup costs five promises more.
    const known = secret ? this.channels.resolveSecretCached(secret) : undefined;
    if (!known) return this.lookUpPublic(secret);
    const leasing = this.limits?.forPublicWebhook(known);
    return leasing ? leasing.then(() => known) : known;
  }

  private async lookUpPublic(secret: string | undefined): Promise<PublicBinding> {
    const bound = secret ? await this.channels.resolveSecret(secret) : undefined;
    if (!bound) throw new AppError('unauthenticated', 'API key not specified');
    // Before the body is read: a leaked URL flooded past its limit costs neither a body nor a query (the limiter
    // answers from memory while the shared bucket is known to be empty).
    await this.limits?.forPublicWebhook(bound);
    return bound;
  }

  /**
   * Key form, before the body is read: with `agent_id` in the query the next checks (key present, key valid) need
   * nothing from the body, so a caller without a valid key is refused with 401/403 whatever it sent.
   */
  async precheckKey(query: Record<string, unknown>, apiKey: string | undefined): Promise<Principal | undefined> {
    if (!firstString(query.agent_id)) return undefined;
    if (!apiKey) throw new AppError('unauthenticated', 'API key not specified');
    return this.auth.byApiKey(apiKey);
  }

  /**
   * Resolves the organization and agent, with the exact refusals of spec 7.2. A busy public URL is answered from
   * memory (its binding resolved before the body was read, its agent cached and current): no promise then.
   */
  private authenticate(call: WebhookCall): Authenticated | Promise<Authenticated> {
    const bound = call.form === 'public' ? call.bound : undefined;
    const agent = bound && this.agents.findCached(bound.organizationId, bound.agentId);
    return bound && agent ? authenticated(call.form, bound.organizationId, bound.agentId, agent, undefined) : this.authenticateReading(call);
  }

  private async authenticateReading(call: WebhookCall): Promise<Authenticated> {
    let organizationId: string;
    let agentId: string;
    let caller: Principal | undefined;
    if (call.form === 'public') {
      ({ organizationId, agentId } = call.bound ?? (await this.resolvePublic(call.secret)));
    } else {
      const id = firstString(call.query.agent_id) ?? firstString(call.body.agent_id);
      if (!id) throw new AppError('bad_request', 'agent_id is required');
      if (!call.apiKey) throw new AppError('unauthenticated', 'API key not specified');
      caller = call.caller ?? (await this.auth.byApiKey(call.apiKey));
      organizationId = caller.organizationId;
      agentId = id;
      await this.limits?.forPrincipal(caller);
      // Running an agent is a member's right, as on POST /v1/agents/{id}/invoke.
      if (!roleAllows(caller.role, 'member')) throw new AppError('forbidden', roleRefusal(caller.role, 'member'));
    }
    return authenticated(call.form, organizationId, agentId, await this.findAgent(call.form, organizationId, agentId), caller);
  }

  /**
   * The bound agent is part of resolving a public URL (spec 7.2): a failing lookup is the same retryable 503 as a
   * failing secret lookup, never a 500 the caller would not retry.
   */
  private async findAgent(form: WebhookForm, organizationId: string, agentId: string) {
    if (form !== 'public') return this.agents.find(organizationId, agentId);
    try {
      return await this.agents.find(organizationId, agentId);
    } catch (e) {
      throw publicLookupUnavailable(e);
    }
  }

  private async discard(organizationId: string, stored: StoredFile[]): Promise<void> {
    try {
      await this.files.discard(organizationId, stored);
    } catch (e) {
      this.log.warn({ err: e }, 'could not remove the files of a refused webhook call');
    }
  }
}

interface Authenticated {
  organizationId: string;
  agentId: string;
  agent: WebhookAgent;
}

/** The agent's own refusals (spec 7.2), once the caller and the agent are known. */
function authenticated(form: WebhookForm, organizationId: string, agentId: string, agent: WebhookAgent | undefined, caller: Principal | undefined): Authenticated {
  // A public URL whose agent is gone is as dead as a revoked one. In key form spec 7.2 has no 404: a valid key of an
  // organization without that agent (another organization's agent, or none) is not a key for it, and another's
  // personal agent is as missing as none.
  if (!agent || (caller && !canSeeAgent(caller, agent.access))) {
    throw form === 'public' ? new AppError('unauthenticated', 'API key not specified') : new AppError('forbidden', 'Invalid API key');
  }
  if (!agent.developerAccess || agent.status === 'INACTIVE') throw new AppError('forbidden', 'Invalid API key');
  return { organizationId, agentId, agent };
}

function firstString(v: unknown): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  if (typeof s === 'number' && Number.isFinite(s)) return String(s);
  return typeof s === 'string' && s.trim() ? s.trim() : undefined;
}

/** The spec 2.7 object, or with `getter` only the value at that path (null when missing). */
export function present(task: Task, params: Pick<WebhookParams, 'json' | 'getter'>): unknown {
  const result: WebhookTaskResult = {
    id: task.id,
    agent_id: task.agent_id,
    status: task.status,
    result: params.json ? parseJsonResult(task.result) : task.result,
    created_at: task.created_at,
    finished_at: task.finished_at,
    source: task.source,
    execution_attempts: task.execution_attempts,
  };
  if (params.getter === undefined) return result;
  const value = readPath(result, params.getter);
  return value === undefined ? null : value;
}

/** `json=true`: the result parsed as JSON, also inside a Markdown code fence; unchanged when it is not JSON. */
function parseJsonResult(result: string | null): unknown {
  if (result === null) return null;
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i.exec(result);
  const text = fenced ? fenced[1]! : result;
  try {
    return JSON.parse(text);
  } catch {
    return result;
  }
}
