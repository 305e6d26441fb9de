import type { AgentConfig } from '../agents/agent.schemas.js';
import { isoTime } from '../lib/clock.js';
import type { Task, TaskFile } from '../tasks/task.types.js';
import type { ContextSection } from './context-contributors.js';

/**
 * The system prompt and the user message of a run, built from the agent's instructions and the task.
 * Pure functions: what reaches the model is decided here and nowhere else.
 */

export type OutputFormat = 'text' | 'markdown' | 'json';

export interface OutputSpec {
  format: OutputFormat;
  /** JSON Schema the answer must validate against (format json only). */
  schema: Record<string, unknown> | null;
}

/** The task's choice wins over the agent's; `voice` is refused on write (agents/unsupported-settings.ts), so only rows stored before that run here, as plain text. */
export function outputSpec(task: Task, agent: Pick<AgentConfig, 'output_format' | 'output_schema'>): OutputSpec {
  const raw = task.output_format ?? agent.output_format ?? 'markdown';
  const format: OutputFormat = raw === 'json' ? 'json' : raw === 'text' || raw === 'voice' ? 'text' : 'markdown';
  const schemaRaw = task.output_schema ?? agent.output_schema;
  const schema =
    format === 'json' && schemaRaw && typeof schemaRaw === 'object' && !Array.isArray(schemaRaw) && Object.keys(schemaRaw).length > 0
      ? (schemaRaw as Record<string, unknown>)
      : null;
  return { format, schema };
}

export interface SystemPromptInput {
  agent: Pick<AgentConfig, 'name' | 'description' | 'instructions' | 'expected_output'>;
  task: Task;
  /** Replaces the agent's instructions (role, goal, general) for this run. */
  instructionsOverride?: string | null;
  /** Replaces the agent's expected_output for this run. */
  expectedOutput?: string | null;
  output: OutputSpec;
  /** Sections from context contributors (knowledge, skills, ...). */
  sections: ContextSection[];
  now: number;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s.trim() !== '') : [];
}

function text(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

export function buildSystemPrompt(input: SystemPromptInput): string {
  const { agent, task } = input;
  const parts: string[] = [];
  const name = text(agent.name);
  const description = text(agent.description);
  parts.push(name ? `You are ${name}, an AI agent.${description ? ` ${description}` : ''}` : 'You are an AI agent.');

  const override = text(input.instructionsOverride);
  if (override) {
    parts.push(`## Instructions\n${override}`);
  } else {
    const role = strings(agent.instructions.role);
    const goal = strings(agent.instructions.goal);
    const general = text(agent.instructions.general);
    if (role.length) parts.push(`## Role\n${role.map((r) => `- ${r}`).join('\n')}`);
    if (goal.length) parts.push(`## Goal\n${goal.map((g) => `- ${g}`).join('\n')}`);
    if (general) parts.push(`## Instructions\n${general}`);
  }

  const expected = text(input.expectedOutput) || text(agent.expected_output);
  if (expected) parts.push(`## Expected output\n${expected}`);

  const context = text(task.additional_context);
  if (context) parts.push(`## Additional context\n${context}`);

  for (const s of input.sections) parts.push(`## ${s.title}\n${s.text.trim()}`);

  parts.push(`## Answer format\n${formatInstruction(input.output)}`);
  parts.push(`Current date and time: ${isoTime(input.now)}`);
  return parts.join('\n\n');
}

export function formatInstruction(output: OutputSpec): string {
  if (output.format === 'markdown') return 'Answer in Markdown.';
  if (output.format === 'text') return 'Answer in plain text, without Markdown formatting.';
  const schema = output.schema
    ? `\nThe JSON value must validate against this JSON Schema:\n${JSON.stringify(output.schema)}`
    : '';
  return `Your final answer must be a single JSON value and nothing else: no prose, no Markdown code fences.${schema}`;
}

/** Bounds that keep a few large attachments from crowding out everything else in the context. */
export const ATTACHMENT_LIMITS = { perFileChars: 50_000, totalChars: 200_000 };

/**
 * The user message: the task's text, the attached files' URLs (always), and their extracted text unless
 * injection is disabled.
 */
export function buildUserMessage(input: { text: string; files: TaskFile[] }, injectAttachments: boolean): string {
  const parts = [input.text];
  if (input.files.length === 0) return input.text;
  const list = input.files.map((f) => `- ${f.name} (${f.mime_type}, ${f.size} bytes): ${f.url}`).join('\n');
  parts.push(`Attached files:\n${list}`);
  if (injectAttachments) {
    let budget = ATTACHMENT_LIMITS.totalChars;
    for (const f of input.files) {
      if (!f.text || budget <= 0) continue;
      const limit = Math.min(ATTACHMENT_LIMITS.perFileChars, budget);
      const body = f.text.length > limit ? `${f.text.slice(0, limit)}\n[... truncated, ${f.text.length - limit} more characters]` : f.text;
      budget -= Math.min(f.text.length, limit);
      parts.push(`Content of ${f.name}:\n<file name=${JSON.stringify(f.name)}>\n${body}\n</file>`);
    }
  }
  return parts.join('\n\n');
}
