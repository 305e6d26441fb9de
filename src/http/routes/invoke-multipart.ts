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
  disable_attachment_injection: z
    .string()
    .optional()
    .describe("true/false, 1/0 or yes/no: keep the files' extracted text out of the prompt (their URLs are given either way)."),
  files: z.array(z.string().meta({ format: 'binary' })).optional().describe('Files to attach: every file part counts, whatever its field name. Typed, limited and extracted as webhook uploads are.'),
});

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
  for (const k of BOOL_FIELDS) {
    if (fields[k] === undefined || fields[k] === '') continue;
    const v = parseTextBool(fields[k]);
    if (v === undefined) issues.push(boolParsingIssue(['body', k]));
    else raw[k] = v;
  }
  const parsed = InvokeBody.safeParse(raw);
  if (!parsed.success) issues.push(...zodIssuesToDetail(parsed.error.issues, ['body']));
  if (issues.length || !parsed.success) throw AppError.validation(issues);
  const { stored, newTaskId } = files.length ? await c.files.ingestForTask(organizationId, files, parsed.data.id ?? undefined) : { stored: [] };
  const attached: TaskFile[] = stored.map((f) => c.files.toTaskFile(f));
  return {
    body: { ...parsed.data, input: { ...parsed.data.input, files: attached } },
    newTaskId,
    discard: () => c.files.discard(organizationId, stored),
  };
}
