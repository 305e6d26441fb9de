import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import type { Container } from '../../container.js';
import { AppError, type ValidationIssue } from '../../errors.js';
import { boolParsingIssue, parseTextBool } from '../../lib/text-bool.js';
import type { TaskFile } from '../../tasks/task.types.js';
import { InvokeBody } from '../../tasks/tasks.schemas.js';
import { readMultipart } from '../multipart.js';
import { zodIssuesToDetail } from '../validation.js';

/** The multipart form of the invoke routes, for the OpenAPI document. */
export const InvokeMultipart = z.object({
  text: z.string().optional().describe('The prompt (input.text).'),
  id: z.string().optional().describe('A task id: continues that conversation (a follow-up message).'),
  additional_context: z.string().optional(),
  expected_output: z.string().optional(),
  instructions_override: z.string().optional(),
  output_format: z.string().optional(),
  output_schema: z.string().optional().describe('A JSON Schema, as JSON text: enforced with output_format json.'),
  user_tokens: z.string().optional().describe('A JSON object {<MCP graph item id>: <access token>}, as JSON text.'),
  user: z.string().optional().describe('input.user as JSON text: {"id", "email", "first_name", "last_name"}.'),
  user_id: z.string().optional().describe('input.user.id (the webhook form names).'),
  user_email: z.string().optional().describe('input.user.email.'),
  user_first_name: z.string().optional().describe('input.user.first_name.'),
  user_last_name: z.string().optional().describe('input.user.last_name.'),
  disable_attachment_injection: z
    .string()
    .optional()
    .describe("true/false, 1/0 or yes/no: keep the files' extracted text out of the prompt (their URLs are given either way)."),
  files: z.array(z.string().meta({ format: 'binary' })).optional().describe('Files to attach: every file part counts, whatever its field name. Typed, limited and extracted as webhook uploads are.'),
});

/** An issue of input.user.<f> at the form field that carried it. */
function formLoc(issue: ValidationIssue, fields: Record<string, unknown>): ValidationIssue {
  const [b, input, user, f] = issue.loc;
  if (b !== 'body' || input !== 'input' || user !== 'user') return issue;
  const flat = Object.entries(USER_FIELDS).find(([, name]) => name === f)?.[0];
  return { ...issue, loc: flat && typeof fields[flat] === 'string' && fields[flat] !== '' ? ['body', flat] : ['body', 'user', ...issue.loc.slice(3)] };
}

/** The invoke body of a multipart form; `newTaskId`: the id its new task must get (its files are stored under it). */
export interface MultipartInvoke {
  body: InvokeBody;
  newTaskId?: string;
  /** Removes the stored files (a refused submission). */
  discard: () => Promise<void>;
}

const TEXT_FIELDS = ['id', 'additional_context', 'expected_output', 'instructions_override', 'output_format'] as const;
/** Booleans as text, read as webhook parameters are (lib/text-bool.ts); '' is "not given". */
const BOOL_FIELDS = ['disable_attachment_injection'] as const;
/** The JSON body's objects, sent as JSON text. */
const JSON_FIELDS = ['output_schema', 'user_tokens'] as const;
/** input.user, field by field as the webhook names them (user_id, ...), or whole as `user` (JSON text). */
const USER_FIELDS = { user_id: 'id', user_email: 'email', user_first_name: 'first_name', user_last_name: 'last_name' } as const;
/** Every text part the form takes; any other is refused (422 extra_forbidden) rather than dropped. File parts count whatever their name. */
const KNOWN_FIELDS: ReadonlySet<string> = new Set(['text', 'user', ...TEXT_FIELDS, ...BOOL_FIELDS, ...JSON_FIELDS, ...Object.keys(USER_FIELDS)]);

/** A JSON text field's value, or an issue at its name. */
function jsonField(value: unknown, key: string, issues: ValidationIssue[]): unknown {
  try {
    return JSON.parse(String(value));
  } catch {
    issues.push({ loc: ['body', key], msg: `${key} must be JSON text`, type: 'json_invalid' });
    return undefined;
  }
}

/**
 * An invocation sent as multipart/form-data: the text fields of InvokeBody, its boolean as text (read as webhook
 * parameters are), plus uploaded files. The console's playground attaches files this way (it may only talk to its own
 * origin, so the webhook receiver's upload is out of reach). The form is validated before anything is stored; the
 * files then go through the same pipeline as webhook uploads (type, limits, extraction, presigned URL), and
 * `discard` removes them when the submission is refused.
 */
export async function readMultipartInvoke(request: FastifyRequest, c: Container, organizationId: string): Promise<MultipartInvoke> {
  const { body: fields, files } = await readMultipart(request, c);
  const raw: Record<string, unknown> = { input: { text: typeof fields.text === 'string' ? fields.text : '' } };
  for (const k of TEXT_FIELDS) if (typeof fields[k] === 'string' && fields[k] !== '') raw[k] = fields[k];
  const issues: ValidationIssue[] = [];
  for (const k of Object.keys(fields)) if (!KNOWN_FIELDS.has(k)) issues.push({ loc: ['body', k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  for (const k of JSON_FIELDS) if (typeof fields[k] === 'string' && fields[k] !== '') raw[k] = jsonField(fields[k], k, issues);
  let user: Record<string, unknown> | undefined;
  if (typeof fields.user === 'string' && fields.user !== '') user = jsonField(fields.user, 'user', issues) as Record<string, unknown> | undefined;
  for (const [k, f] of Object.entries(USER_FIELDS)) {
    if (typeof fields[k] !== 'string' || fields[k] === '') continue;
    if (user !== undefined && (typeof user !== 'object' || user === null || f in user)) issues.push({ loc: ['body', k], msg: `give ${f} in user or in ${k}, not both`, type: 'value_error' });
    else user = { ...(user ?? {}), [f]: fields[k] };
  }
  if (user !== undefined) (raw.input as Record<string, unknown>).user = user;
  for (const k of BOOL_FIELDS) {
    if (fields[k] === undefined || fields[k] === '') continue;
    const v = parseTextBool(fields[k]);
    if (v === undefined) issues.push(boolParsingIssue(['body', k]));
    else raw[k] = v;
  }
  const parsed = InvokeBody.safeParse(raw);
  // The user's fields are named as the form names them (body.user_email, or body.user.email).
  if (!parsed.success) issues.push(...zodIssuesToDetail(parsed.error.issues, ['body']).map((i) => formLoc(i, fields)));
  if (issues.length || !parsed.success) throw AppError.validation(issues);
  const { stored, newTaskId } = files.length ? await c.files.ingestForTask(organizationId, files, parsed.data.id ?? undefined) : { stored: [] };
  const attached: TaskFile[] = stored.map((f) => c.files.toTaskFile(f));
  return {
    body: { ...parsed.data, input: { ...parsed.data.input, files: attached } },
    newTaskId,
    discard: () => c.files.discard(organizationId, stored),
  };
}
