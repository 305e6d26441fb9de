import { isoTime, type Clock } from '../lib/clock.js';
import { CALL_DEPTH_HEADER } from '../tasks/call-depth.js';
import type { Task } from '../tasks/task.types.js';
import { isEgressRefused } from '../net/index.js';
import { readTextBounded } from '../net/bounded-response.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import { nextRunNumber } from '../runtime/history.js';
import { JsonSchemaValidator, parseJsonAnswer } from '../runtime/json-output.js';
import { buildUserMessage } from '../runtime/prompt.js';
import { RunAbortedError, type RunOutcome, type RunRequest, type ThreadMessage } from '../runtime/task-runner.js';
import type { A2aConnectivity, CurlConnectivity } from './connectivity.js';

/** What both external runners share: credentials, the outbound fetch, trace steps, outcomes and error wording. */

/** Reads an organization secret by name (the secrets domain's reveal). */
export type SecretReader = (organizationId: string, name: string) => Promise<string | undefined>;
export type Fetch = typeof globalThis.fetch;

const NO_TOKENS = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
/** Remote answers beyond this are refused: a task result is not a file store. */
export const MAX_REMOTE_ANSWER_BYTES = 1_000_000;
/** Error texts from a remote end go into the task result and the trace: shortened. */
const MAX_ERROR_CHARS = 500;

/** A remote call that failed in a way the task result should say in words (not a bug of ours). */
export class RemoteAgentError extends Error {
  constructor(
    message: string,
    /** `failed`: the remote agent said it failed the task; `error`: it could not be reached or answered wrongly. */
    readonly status: 'failed' | 'error' = 'error',
  ) {
    super(message);
    this.name = 'RemoteAgentError';
  }
}

/**
 * The headers every request to the remote agent carries: `custom_headers`, then the credential of `auth_type`, and
 * the call depth of the task the remote agent will run (this task's + 1), so a remote Agentry refuses a loop of agents
 * calling each other (src/tasks/call-depth.ts). Other servers ignore the header.
 */
export async function remoteHeaders(c: A2aConnectivity | CurlConnectivity, task: Task, secrets: SecretReader): Promise<Record<string, string>> {
  const organizationId = task.organization_id;
  const headers: Record<string, string> = {};
  // Ours, whatever the case a custom header spells it in: a configured value must not reset the count.
  for (const [k, v] of Object.entries(c.custom_headers ?? {})) if (k.toLowerCase() !== CALL_DEPTH_HEADER) headers[k] = v;
  headers[CALL_DEPTH_HEADER] = String(task.call_depth + 1);
  if (c.auth_type === 'none') return headers;
  let key = c.api_key;
  if (!key && c.api_key_secret) {
    key = await secrets(organizationId, c.api_key_secret);
    if (!key) throw new RemoteAgentError(`The organization secret '${c.api_key_secret}' named by connectivity_details.api_key_secret does not exist; create it with PUT /v1/secrets/${c.api_key_secret}`);
  }
  // A stored key that can no longer be opened (another master key) is revealed as null.
  if (!key) throw new RemoteAgentError('connectivity_details.api_key cannot be read; set it again');
  if (c.auth_type === 'bearer') headers.authorization = `Bearer ${key}`;
  else headers[c.api_key_header_name || 'x-api-key'] = key;
  return headers;
}

/**
 * A fetch for one run: the egress-checked fetch, with the remote agent's headers, bounded by the run's signal (stop,
 * lost lease) and the connectivity timeout. It remembers the last HTTP status, so errors can say "authentication
 * failed" instead of quoting a client library.
 */
export function runFetch(base: Fetch, headers: Record<string, string>, signal: AbortSignal): Fetch & { lastStatus?: number } {
  const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const h = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) if (!h.has(k)) h.set(k, v);
    const signals = [signal, init?.signal].filter((s): s is AbortSignal => !!s);
    const res = await base(input, { ...init, headers: h, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0] });
    f.lastStatus = res.status;
    return bounded(res);
  }) as Fetch & { lastStatus?: number };
  return f;
}

/** A whole answer (not a stream, whose events the SDK bounds) larger than this fails the call instead of filling memory. */
const MAX_CLIENT_BODY_BYTES = 10 * 1024 * 1024;

/** The response with its body cut off by an error past MAX_CLIENT_BODY_BYTES (a client library reads it whole). */
function bounded(res: Response): Response {
  if (!res.body || /text\/event-stream/i.test(res.headers.get('content-type') ?? '')) return res;
  let seen = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > MAX_CLIENT_BODY_BYTES) controller.error(new RemoteAgentError(`The remote answer is larger than ${MAX_CLIENT_BODY_BYTES} bytes`));
      else controller.enqueue(chunk);
    },
  });
  const out = new Response(res.body.pipeThrough(limit), { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperty(out, 'url', { value: res.url });
  return out;
}

/** A signal that aborts with the run, or after `seconds` with a TimeoutError. */
export function runSignal(run: AbortSignal, seconds: number): AbortSignal {
  return AbortSignal.any([run, AbortSignal.timeout(seconds * 1000)]);
}

/** Words for a failed remote call, for the task result and the trace. */
export function describeFailure(e: unknown, agentType: string, timeoutSeconds: number, lastStatus: number | undefined, timedOut: boolean): string {
  if (e instanceof RemoteAgentError) return e.message;
  if (isEgressRefused(e)) return (e as Error).message;
  if (timedOut) return `The ${agentType} agent did not answer within ${timeoutSeconds} s (connectivity_details.timeout_seconds)`;
  if (lastStatus === 401 || lastStatus === 403) return `The ${agentType} agent refused the credentials (HTTP ${lastStatus}): check connectivity_details auth_type and api_key`;
  const text = e instanceof Error ? (e.cause instanceof Error ? `${e.message}: ${e.cause.message}` : e.message) : String(e);
  return `The ${agentType} agent call failed: ${text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}...` : text}`;
}

export interface TraceStep {
  /** e.g. "a2a SendMessage", "curl POST". */
  name: string;
  payload: Record<string, unknown>;
}

export interface StepResult {
  /** HTTP status or remote task state, for the trace. */
  status?: string | number;
  remoteTaskId?: string;
  result?: unknown;
}

/**
 * One remote call as a trace step: `tool_call_request` before (awaited: the task is committed before anything
 * leaves), `tool_call_result` after with status, latency and the remote task id, as the console shows tool calls.
 */
export async function traced<T extends StepResult>(req: RunRequest, clock: Clock, step: TraceStep, call: () => Promise<T>): Promise<T> {
  const id = `remote-${clock.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  await req.emit('tool_call_request', { tool_call_id: id, tool_name: step.name, graph_item_id: null, payload: step.payload, remote: true });
  const started = clock.now();
  try {
    const r = await call();
    await req.emit('tool_call_result', {
      tool_call_id: id,
      tool_name: step.name,
      graph_item_id: null,
      payload: step.payload,
      result: r.result ?? null,
      status: r.status ?? null,
      remote_task_id: r.remoteTaskId ?? null,
      duration_ms: clock.now() - started,
      is_error: false,
      remote: true,
    });
    return r;
  } catch (e) {
    if (!req.signal.aborted) {
      await req.emit('tool_call_result', {
        tool_call_id: id,
        tool_name: step.name,
        graph_item_id: null,
        payload: step.payload,
        result: e instanceof Error ? e.message.slice(0, MAX_ERROR_CHARS) : String(e),
        status: (e as { status?: unknown }).status ?? null,
        remote_task_id: null,
        duration_ms: clock.now() - started,
        is_error: true,
        remote: true,
      });
    }
    throw e;
  }
}

/** The prompt sent to a remote agent: the task's text with its files listed (and their text, unless disabled). */
export function promptOf(req: RunRequest): string {
  return buildUserMessage(req.task.input, !req.extras.disableAttachmentInjection);
}

/**
 * The invocation's fields beside its text (spec 3.2; spec 4.5: a webhook's extra body fields are context), as a remote
 * agent receives them: `additional_context`, `expected_output`, `instructions_override`, and the user (`id`, `email`,
 * `first_name`, `last_name`) unless agno_settings.add_user_to_context is false. Empty when the invocation has none.
 */
export function invocationContext(req: RunRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (req.task.additional_context) out.additional_context = req.task.additional_context;
  if (req.extras.expectedOutput) out.expected_output = req.extras.expectedOutput;
  if (req.extras.instructionsOverride) out.instructions_override = req.extras.instructionsOverride;
  const agno = (req.agent.agno_settings ?? {}) as { add_user_to_context?: boolean };
  const user = req.task.input.user;
  if (user && agno.add_user_to_context !== false) {
    const shown = Object.fromEntries(Object.entries(user).filter(([, v]) => typeof v === 'string' && v !== ''));
    if (Object.keys(shown).length) out.user = shown;
  }
  return out;
}

const SECTION_TITLES: Record<string, string> = {
  additional_context: 'Additional context',
  expected_output: 'Expected output',
  instructions_override: 'Instructions for this task',
};

/**
 * The task's own instructions (context, expected output, instructions override) as labelled text sections, for
 * remote agents that read only text. The user is not among them: it goes only where a structured field carries it
 * (A2A metadata, curl `context_path`), so a caller's identity is never pasted into a prompt text.
 */
export function contextText(ctx: Record<string, unknown>): string {
  return Object.entries(ctx)
    .filter(([k, v]) => k in SECTION_TITLES && typeof v === 'string')
    .map(([k, v]) => `${SECTION_TITLES[k]}:\n${v as string}`)
    .join('\n\n');
}

/** Builds the run's outcome, with the prompt and answer as the thread of this run. */
export function outcome(req: RunRequest, clock: Clock, status: RunOutcome['status'], result: string, prompt: string): RunOutcome {
  const run = nextRunNumber(req.history);
  const messages: ThreadMessage[] = [
    { role: 'user', content: prompt, created_at: isoTime(clock.now()), run },
    { role: 'assistant', content: result, created_at: isoTime(clock.now()), run },
  ];
  return { status, result, tokens: NO_TOKENS, messages, llm_model_provider: null, llm_model_name: null };
}

/** A stopped or lost run: what the worker expects (RunAbortedError), with the prompt in the thread. */
export function aborted(req: RunRequest, clock: Clock, prompt: string): RunAbortedError {
  const run = nextRunNumber(req.history);
  return new RunAbortedError(NO_TOKENS, [{ role: 'user', content: prompt, created_at: isoTime(clock.now()), run }], req.signal.reason);
}

/** Reads a response body up to `max` bytes; a longer one is refused rather than held in memory. */
export async function readBounded(res: Response, max = MAX_REMOTE_ANSWER_BYTES): Promise<string> {
  const tooLarge = () => new RemoteAgentError(`The remote answer is larger than ${max} bytes`);
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel();
    throw tooLarge();
  }
  return readTextBounded(res, max, tooLarge);
}

/**
 * `output_schema` (the agent's or the invocation's) holds for remote answers and workflow results too: a JSON answer that does not match
 * ends the task `failed` with the problems (there is no model to ask again). Undefined when it holds or none is set.
 */
export async function outputProblem(req: RunRequest, answer: string, checker: SchemaChecker, subject = "The remote agent's answer"): Promise<string | undefined> {
  const schema = req.task.output_schema;
  if (!schema || req.task.output_format !== 'json') return undefined;
  const parsed = parseJsonAnswer(answer);
  if (!parsed.ok) return `${subject} is not JSON, as output_schema requires: ${answer.slice(0, 200)}`;
  const problems = await new JsonSchemaValidator(checker, req.task.organization_id).validate(schema, parsed.value);
  return problems.length ? `${subject} does not match output_schema: ${problems.join('; ')}` : undefined;
}
