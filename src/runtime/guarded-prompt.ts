import type { ModelMessage } from 'ai';
import type { RunGuard } from '../guardrails/run-guard.js';
import type { Task } from '../tasks/task.types.js';
import type { ContextSection } from './context-contributors.js';
import { buildUserMessage } from './prompt.js';

/**
 * What a run sends the model, after the agent's guards (src/guardrails/): the replayed history, the caller's input
 * and additional context, the uploaded files' names, URLs and text, and every context section with a guardOrigin
 * (knowledge passages, memories, the session summary, the user's fields) each pass through
 * `guard.screen`, then the caller's input as a whole through `guard.screenInput` (moderation). Agent
 * instructions and other configuration are the author's, not screened. Throws GuardrailRefusal.
 */

export interface GuardedPrompt {
  /** The task with its additional_context screened (the system prompt is built from it). */
  task: Task;
  sections: ContextSection[];
  history: ModelMessage[];
  userMessage: string;
}

export async function guardPrompt(
  guard: RunGuard,
  input: { task: Task; sections: ContextSection[]; history: ModelMessage[]; injectAttachments: boolean },
): Promise<GuardedPrompt> {
  const { task, injectAttachments } = input;
  if (!guard.active) {
    return { task, sections: input.sections, history: input.history, userMessage: buildUserMessage(task.input, injectAttachments) };
  }
  // In the order the model reads them, so placeholders are numbered as it meets them.
  const history: ModelMessage[] = [];
  for (const m of input.history) {
    history.push(typeof m.content === 'string' ? ({ ...m, content: await guard.screen(m.content, { origin: 'history' }) } as ModelMessage) : m);
  }
  const text = await guard.screen(task.input.text, { origin: 'input' });
  const context = task.additional_context ? await guard.screen(task.additional_context, { origin: 'context' }) : task.additional_context;
  const files = [];
  for (const f of task.input.files) {
    // The trace names a file by its screened name: a name holding personal data must not put it in the trace.
    const name = await guard.screen(f.name, { origin: 'file' });
    // The URL is listed to the model too, and an invoke's input.files URL is the caller's, query string and all.
    const url = await guard.screen(f.url, { origin: 'file', name });
    const fileText = injectAttachments && f.text ? await guard.screen(f.text, { origin: 'file', name }) : f.text;
    files.push({ ...f, name, url, text: fileText });
  }
  const sections: ContextSection[] = [];
  for (const s of input.sections) sections.push(s.guardOrigin ? { ...s, text: await guard.screen(s.text, { origin: s.guardOrigin }) } : s);

  const userMessage = buildUserMessage({ text, files }, injectAttachments);
  // Exactly what the model will read of the caller's input: the message (with the file text it carries) and the context.
  await guard.screenInput([userMessage, context ?? ''].filter((t) => t.trim()));
  return { task: { ...task, additional_context: context }, sections, history, userMessage };
}
