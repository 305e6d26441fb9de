import { z } from 'zod';
import { HEADER_NAME, HEADER_VALUE } from '../connectors/invoke/request-builder.js';
import { AppError, type ValidationIssue } from '../errors.js';
import { zodIssuesToDetail } from '../http/validation.js';
import { chooseModel, DEFAULT_MODEL_PROVIDER } from '../llm/model-catalog.js';

/**
 * `connectivity_details` of the external agent types (spec 2.1: "For types a2a and curl"). The A2A form of the spec
 * names `custom_headers`, `auth_type` and `api_key_header_name`; the rest (where the agent is, where the credential
 * comes from, the curl request and answer shape, the timeout) is ours, documented in docs/external-agents.md.
 * Checked when an agent is created or changed (422 naming the field) and again before every run, since an agent
 * stored before these checks existed may lack them.
 */

export const EXTERNAL_AGENT_TYPES = ['a2a', 'curl'] as const;
export type ExternalAgentType = (typeof EXTERNAL_AGENT_TYPES)[number];
export const REMOTE_AUTH_TYPES = ['none', 'api_key', 'bearer'] as const;
export const CURL_METHODS = ['GET', 'POST', 'PUT', 'PATCH'] as const;

/** Bounds: a remote call must not outlive the task's own patience, and nothing a user stores is unbounded. */
export const MAX_TIMEOUT_SECONDS = 3600;
const DEFAULT_TIMEOUT_SECONDS = 300;
const MAX_HEADERS = 50;

const httpUrl = () => z.url({ protocol: /^https?$/ }).max(2048);
const headerName = () => z.string().min(1).max(256).regex(HEADER_NAME, 'not a valid HTTP header name');
const headerValue = () => z.string().max(8192).regex(HEADER_VALUE, 'not a valid HTTP header value');
const dotPath = () => z.string().min(1).max(512).regex(/^[^\s]+$/, 'a dot path has no spaces (e.g. "choices.0.message.content")');

const authFields = {
  custom_headers: z
    .record(headerName(), headerValue())
    .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
    .default({}),
  auth_type: z.enum(REMOTE_AUTH_TYPES).default('none'),
  /** The header `api_key` auth sends the key in; `x-api-key` when absent. */
  api_key_header_name: headerName().nullable().optional(),
  /** The credential (write-only: sealed at rest, shown as "********"). */
  api_key: z.string().min(1).max(8192).regex(HEADER_VALUE, 'not a valid HTTP header value').optional(),
  /** Or the name of an organization secret (PUT /v1/secrets/{name}) holding it, read at run time. */
  api_key_secret: z.string().min(1).max(256).optional(),
  timeout_seconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).default(DEFAULT_TIMEOUT_SECONDS),
};

function checkAuth(v: { auth_type: string; api_key?: string; api_key_secret?: string }, ctx: z.RefinementCtx): void {
  if (v.auth_type !== 'none' && !v.api_key && !v.api_key_secret) {
    ctx.addIssue({ code: 'custom', path: ['api_key'], message: `auth_type '${v.auth_type}' needs api_key or api_key_secret` });
  }
  if (v.api_key && v.api_key_secret) ctx.addIssue({ code: 'custom', path: ['api_key_secret'], message: 'give api_key or api_key_secret, not both' });
}

export const A2aConnectivity = z
  .strictObject({
    /** The agent's base URL: its card is read from `<url>/.well-known/agent-card.json` unless `agent_card_path` says otherwise. */
    url: httpUrl(),
    /** Path of the agent card, appended to `url` (default `/.well-known/agent-card.json`); "" when `url` is the card's own address. */
    agent_card_path: z.string().max(512).optional(),
    ...authFields,
  })
  .superRefine(checkAuth);
export type A2aConnectivity = z.output<typeof A2aConnectivity>;

export const CurlConnectivity = z
  .strictObject({
    url: httpUrl(),
    method: z.enum(CURL_METHODS).default('POST'),
    /** The JSON body sent (POST/PUT/PATCH), with the prompt placed at `prompt_path`. */
    body: z.record(z.string(), z.unknown()).default({}),
    /** Where the task's prompt goes: a dot path into `body`, or for GET the query parameter's name. */
    prompt_path: dotPath().default('prompt'),
    /**
     * Where the invocation's context (additional_context, expected_output, instructions_override, user)
     * goes as an object: a dot path into `body`, or for GET a query parameter holding its JSON. Absent: it follows
     * the prompt as labelled text sections (docs/external-agents.md#context).
     */
    context_path: dotPath().optional(),
    /** Where the answer is read in a JSON response; absent: the whole response body is the answer. */
    response_path: dotPath().nullable().optional(),
    ...authFields,
  })
  .superRefine(checkAuth)
  .superRefine((v, ctx) => {
    if (v.method === 'GET' && Object.keys(v.body).length > 0) ctx.addIssue({ code: 'custom', path: ['body'], message: 'a GET request has no body: the prompt goes in the query parameter prompt_path' });
  });
export type CurlConnectivity = z.output<typeof CurlConnectivity>;

const SCHEMAS: Record<ExternalAgentType, z.ZodType> = { a2a: A2aConnectivity, curl: CurlConnectivity };

export function isExternalType(type: unknown): type is ExternalAgentType {
  return type === 'a2a' || type === 'curl';
}

/** The issues of `details` for `type`, located under `loc` (e.g. ['body', 'connectivity_details']). */
export function connectivityIssues(type: ExternalAgentType, details: unknown, loc: (string | number)[]): ValidationIssue[] {
  const r = SCHEMAS[type].safeParse(details ?? {}, { reportInput: true });
  return r.success ? [] : zodIssuesToDetail(r.error.issues, loc);
}

/** Parses the stored (revealed) details for a run; throws a message fit for the task result when they are unusable. */
export function parseConnectivity<T extends ExternalAgentType>(type: T, details: unknown): T extends 'a2a' ? A2aConnectivity : CurlConnectivity {
  const r = SCHEMAS[type].safeParse(details ?? {});
  if (!r.success) {
    const first = r.error.issues[0];
    throw new ConnectivityError(`The ${type} agent's connectivity_details are invalid: ${first.path.join('.') || '(root)'}: ${first.message}`);
  }
  return r.data as never;
}

export class ConnectivityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectivityError';
  }
}

/**
 * Agent fields an external agent cannot act on: it has its own model, tools and instructions, so attaching ours would
 * store settings that do nothing. Refused with 422 instead (the LLM fields always carry defaults and are not listed).
 */
const LOCAL_ONLY_FIELDS = ['tools', 'attached_tools', 'graph', 'knowledge_bases', 'skills'] as const;
/** Settings of our own model loop (unset by default): refused when set on an external agent. */
const LOCAL_MODEL_FIELDS = [
  'llm_api_base',
  'llm_credentials',
  'llm_credentials_key',
  'llm_extra_headers',
  'expected_output',
  'is_supervised',
  'deep_planning',
  'enforce_deep_planning',
  'use_oidc_pre_auth_token_for_llm',
] as const;

/** agno_settings switches of our model loop (guardrails, memory): refused when on for an external agent. */
const LOCAL_AGNO_SWITCHES = ['pii_detection_enabled', 'prompt_injection_detection_enabled', 'openai_moderation_enabled', 'user_memories', 'agent_memories', 'agentic_memory', 'session_summaries'] as const;
/**
 * agno_settings values of our model loop (history, tool calls, planning, guardrail details) with their defaults: any
 * other value is refused on an external agent, which keeps its own history and runs its own tools.
 */
const LOCAL_AGNO_DEFAULTS: Readonly<Record<string, unknown>> = {
  session_storage: true,
  num_history_runs: 10,
  tool_call_limit: 0,
  max_tool_calls_from_history: 0,
  max_plan_retries: 15,
  openai_moderation_categories: null,
  prompt_injection_content_action: 'warn',
};

/** Throws a 422 when `config` is an external agent whose connectivity or local-only fields are wrong. */
export function checkExternalAgent(config: Record<string, unknown>): void {
  const type = config.type;
  if (!isExternalType(type)) return;
  const issues = connectivityIssues(type, config.connectivity_details, ['body', 'connectivity_details']);
  for (const f of LOCAL_ONLY_FIELDS) {
    const v = config[f];
    if (Array.isArray(v) && v.length > 0) issues.push({ loc: ['body', f], msg: `an agent of type '${type}' runs remotely and cannot use ${f}`, type: 'value_error' });
  }
  for (const f of LOCAL_MODEL_FIELDS) {
    const v = config[f];
    const set = v !== null && v !== undefined && v !== false && v !== '' && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
    if (set) issues.push({ loc: ['body', f], msg: `an agent of type '${type}' has no local model: ${f} would do nothing`, type: 'value_error' });
  }
  // The guards, memory and self-scheduling act inside our own model loop, which an external agent does not run.
  const agno = (config.agno_settings ?? {}) as Record<string, unknown>;
  for (const f of LOCAL_AGNO_SWITCHES) {
    if (agno[f] === true) issues.push({ loc: ['body', 'agno_settings', f], msg: `an agent of type '${type}' runs remotely: ${f} acts only in Agentry's own model loop`, type: 'value_error' });
  }
  for (const [f, d] of Object.entries(LOCAL_AGNO_DEFAULTS)) {
    const v = agno[f];
    if (v !== undefined && JSON.stringify(v) !== JSON.stringify(d)) issues.push({ loc: ['body', 'agno_settings', f], msg: `an agent of type '${type}' runs remotely: ${f} acts only in Agentry's own model loop (leave it at ${JSON.stringify(d)})`, type: 'value_error' });
  }
  const compression = agno.tool_calls_compression as { enabled?: unknown } | undefined;
  if (compression?.enabled === true) issues.push({ loc: ['body', 'agno_settings', 'tool_calls_compression', 'enabled'], msg: `an agent of type '${type}' runs remotely: it makes no tool calls here to compress`, type: 'value_error' });
  const strategies = config.task_level_strategies as { iterative_strategy?: unknown; stop_strategy?: { enabled?: unknown } | null } | null | undefined;
  if (strategies?.iterative_strategy) issues.push({ loc: ['body', 'task_level_strategies', 'iterative_strategy'], msg: `an agent of type '${type}' runs remotely: iterative_strategy bounds Agentry's own model loop`, type: 'value_error' });
  if (strategies?.stop_strategy?.enabled === true) issues.push({ loc: ['body', 'task_level_strategies', 'stop_strategy'], msg: `an agent of type '${type}' runs remotely: stop_strategy stops Agentry's own model loop`, type: 'value_error' });
  // The model fields carry defaults (the create schema fills them): only a model chosen on purpose is refused.
  if (config.model_provider !== undefined && config.model_provider !== DEFAULT_MODEL_PROVIDER) {
    issues.push({ loc: ['body', 'model_provider'], msg: `an agent of type '${type}' has no local model: model_provider would do nothing`, type: 'value_error' });
  } else if (typeof config.model_name === 'string' && config.model_name !== chooseModel(DEFAULT_MODEL_PROVIDER, null).modelName) {
    issues.push({ loc: ['body', 'model_name'], msg: `an agent of type '${type}' has no local model: model_name would do nothing`, type: 'value_error' });
  }
  if (config.can_self_schedule === true) issues.push({ loc: ['body', 'can_self_schedule'], msg: `an agent of type '${type}' runs remotely and cannot call the self-scheduling tools`, type: 'value_error' });
  const instructions = config.instructions as { role?: unknown[]; goal?: unknown[]; general?: string } | undefined;
  if (instructions && ((instructions.role?.length ?? 0) > 0 || (instructions.goal?.length ?? 0) > 0 || (instructions.general ?? '') !== '')) {
    issues.push({ loc: ['body', 'instructions'], msg: `an agent of type '${type}' follows its own instructions; leave instructions empty`, type: 'value_error' });
  }
  if (issues.length) throw AppError.validation(issues);
}
