import { AppError, type ValidationIssue } from '../errors.js';
import type { TaskUser } from '../tasks/task.types.js';
import { readPath } from '../lib/dot-path.js';
import { isValidTaskId } from '../tasks/task-ids.js';
import { isHttpUrl } from '../notifications/notification-settings.js';
import { boolParsingIssue, parseTextBool } from '../lib/text-bool.js';

/**
 * The parameters of spec 4.5, resolved from the query string, the body, `params_mapping` and the defaults, in that
 * order of precedence (docs/contract.md#webhook-params). Pure: no HTTP, no storage.
 */

export type WebhookForm = 'public' | 'key';

export interface WebhookParams {
  prompt?: string;
  asynchronous: boolean;
  taskId?: string;
  user: TaskUser | null;
  getter?: string;
  json: boolean;
  userTokens?: Record<string, string>;
  disableAttachmentInjection: boolean;
  /** Key form: the agent to run (query or body). */
  agentId?: string;
  /** Called with the signed task-end notification (docs/notifications.md). */
  callbackUrl?: string;
  /** Body fields that are not parameters: given to the agent as context. */
  context: Record<string, unknown> | null;
}

const STRING_PARAMS = ['prompt', 'task_id', 'user_id', 'user_email', 'user_first_name', 'user_last_name', 'getter', 'agent_id', 'callback_url'] as const;
const MAX_CALLBACK_URL = 2048;
const BOOL_PARAMS = ['asynchronous', 'json', 'disable_attachment_injection'] as const;
/** Names `params_mapping` may fill (spec 4.5). */
export const MAPPABLE = ['task_id', 'user_id', 'user_email', 'user_first_name', 'user_last_name', 'prompt'] as const;

/** Every name read as a parameter from the query or the body. */
const LOOKED_UP = new Set<string>([...STRING_PARAMS, ...BOOL_PARAMS, 'user_tokens', 'params_mapping']);

/** Every name that is a parameter, never context. Credentials are listed so they can never reach the model. */
const RESERVED = new Set<string>([...LOOKED_UP, 'files', 'file', 'x-api-key', 'api_key']);

/** A parameter's value and where it was found (for the error that refuses it). */
interface Found {
  value: unknown;
  loc: (string | number)[];
}

/** '' in a query string or a form means "not given" for every parameter but the prompt. */
function present(v: unknown, name: string): boolean {
  return v !== undefined && v !== null && !(v === '' && name !== 'prompt');
}

/**
 * The parameters given directly, the query's before the body's: one pass over each. They usually hold one or two
 * fields, so walking them costs less than looking fifteen names up by computed key in each (the accept's largest
 * single cost in V8's own code once). A repeated query parameter counts once (its first value).
 */
function givenParams(query: Record<string, unknown>, body: Record<string, unknown>): Map<string, Found> | undefined {
  let given: Map<string, Found> | undefined;
  for (const k in query) {
    if (!Object.hasOwn(query, k) || !LOOKED_UP.has(k)) continue;
    const q = query[k];
    const v = Array.isArray(q) ? q[0] : q;
    if (present(v, k)) (given ??= new Map()).set(k, { value: v, loc: ['query', k] });
  }
  for (const k in body) {
    if (!Object.hasOwn(body, k) || !LOOKED_UP.has(k) || given?.has(k)) continue;
    const v = body[k];
    if (present(v, k)) (given ??= new Map()).set(k, { value: v, loc: ['body', k] });
  }
  return given;
}

export function parseWebhookParams(form: WebhookForm, query: Record<string, unknown>, body: Record<string, unknown>): WebhookParams {
  const issues: ValidationIssue[] = [];
  const given = givenParams(query, body);
  const raw = (name: string): Found | undefined => given?.get(name);
  const mapped = resolveMapping(raw('params_mapping'), body, issues);
  const found = (name: (typeof STRING_PARAMS)[number]): Found | undefined => raw(name) ?? mapped?.get(name);

  const str = (name: (typeof STRING_PARAMS)[number]): string | undefined => {
    const f = found(name);
    if (!f) return undefined;
    const v = f.value;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    issues.push({ loc: f.loc, msg: 'Input should be a valid string', type: 'string_type' });
    return undefined;
  };

  const bool = (name: (typeof BOOL_PARAMS)[number], fallback: boolean): boolean => {
    const f = raw(name);
    if (!f) return fallback;
    const v = parseTextBool(f.value);
    if (v !== undefined) return v;
    issues.push(boolParsingIssue(f.loc));
    return fallback;
  };

  // Chat platforms and xpander's own clients post `{"message": ...}`: with no prompt given, a text `message` of the
  // body is the prompt (and then not context as well).
  const message = typeof body.message === 'string' ? body.message : undefined;
  const explicit = str('prompt');
  const prompt = explicit ?? message;
  const messageIsPrompt = explicit === undefined && message !== undefined;
  const taskId = str('task_id');
  if (taskId !== undefined && !isValidTaskId(taskId)) {
    issues.push({ loc: found('task_id')!.loc, msg: 'Value error, task_id must be 1 to 128 printable characters', type: 'value_error' });
  }
  const user: TaskUser = {
    id: str('user_id') ?? null,
    email: str('user_email') ?? null,
    first_name: str('user_first_name') ?? null,
    last_name: str('user_last_name') ?? null,
  };
  const getter = str('getter');
  const callbackUrl = str('callback_url');
  if (callbackUrl !== undefined && (callbackUrl.length > MAX_CALLBACK_URL || !isHttpUrl(callbackUrl))) {
    issues.push({ loc: found('callback_url')!.loc, msg: `Value error, callback_url must be an absolute http or https URL of at most ${MAX_CALLBACK_URL} characters`, type: 'value_error' });
  }
  const agentId = str('agent_id');
  const asynchronous = bool('asynchronous', form === 'public');
  const json = bool('json', false);
  const disableAttachmentInjection = bool('disable_attachment_injection', false);
  const userTokens = parseStringMap(raw('user_tokens'), 'user_tokens', issues);

  // A file given as text (a URL, a path, base64) where content is expected (spec 4.5 rule 3).
  for (const name of ['files', 'file']) {
    if (!present(body[name], name)) continue;
    issues.push({
      loc: ['body', name],
      msg: 'Value error, files must be uploaded as multipart file content; URLs to external files are not supported',
      type: 'value_error',
    });
  }

  if (issues.length) throw AppError.validation(issues);

  let context: Record<string, unknown> | null = null;
  for (const k in body) {
    if (Object.hasOwn(body, k) && !RESERVED.has(k.toLowerCase()) && !(messageIsPrompt && k === 'message')) (context ??= {})[k] = body[k];
  }

  return {
    prompt,
    asynchronous,
    taskId,
    user: user.id !== null || user.email !== null || user.first_name !== null || user.last_name !== null ? user : null,
    getter,
    json,
    userTokens,
    disableAttachmentInjection,
    agentId,
    callbackUrl,
    context,
  };
}

/** A JSON object (given as an object in a JSON body, or as JSON text) whose values are all strings. */
function parseStringMap(
  found: Found | undefined,
  name: string,
  issues: ValidationIssue[],
): Record<string, string> | undefined {
  if (!found) return undefined;
  let v = found.value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      issues.push({ loc: found.loc, msg: `Value error, ${name} must be a JSON object`, type: 'value_error' });
      return undefined;
    }
  }
  if (!v || typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) {
    issues.push({ loc: found.loc, msg: `Value error, ${name} must be a JSON object whose values are strings`, type: 'value_error' });
    return undefined;
  }
  return v as Record<string, string>;
}

/**
 * `params_mapping`: parameter name -> dot path into the parsed body. A mapped value counts as a body value below
 * a direct one; numbers and booleans become strings, objects their JSON; a missing path is ignored.
 */
function resolveMapping(
  found: Found | undefined,
  body: Record<string, unknown>,
  issues: ValidationIssue[],
): Map<string, Found> | undefined {
  const mapping = parseStringMap(found, 'params_mapping', issues);
  if (!mapping || !found) return undefined;
  const out = new Map<string, Found>();
  for (const [name, path] of Object.entries(mapping)) {
    if (!(MAPPABLE as readonly string[]).includes(name)) {
      issues.push({
        loc: [...found.loc, name],
        msg: `Value error, params_mapping cannot set '${name}' (supported: ${MAPPABLE.join(', ')})`,
        type: 'value_error',
      });
      continue;
    }
    const value = readPath(body, path);
    if (value === undefined || value === null) continue;
    const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
    out.set(name, { value: text, loc: [...found.loc, name] });
  }
  return out;
}
