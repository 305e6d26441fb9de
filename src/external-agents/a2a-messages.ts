import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';

/** A2A messages, parts and task states as both directions use them (the SDK's v1.0 types; v0.3 peers are translated by its compat layer). */

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);
/** Interrupted: the remote agent waits for the caller (more input, or authentication). */
export const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** `extra`: more text parts after the first (an invocation's context); `metadata`: the message's. */
export function message(role: Role, text: string, ids: { messageId: string; contextId?: string; taskId?: string }, extra: string[] = [], metadata?: Record<string, unknown>): Message {
  return {
    messageId: ids.messageId,
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role,
    parts: [textPart(text), ...extra.map(textPart)],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The text of parts: text as it is, structured data as JSON, files by name and address. */
export function partsText(parts: readonly Part[] | undefined): string {
  const out: string[] = [];
  for (const p of parts ?? []) {
    const c = p.content;
    if (!c) continue;
    if (c.$case === 'text') out.push(c.value);
    else if (c.$case === 'data') out.push(JSON.stringify(c.value));
    else if (c.$case === 'url') out.push(`${p.filename || 'file'}: ${c.value}`);
    else if (c.$case === 'raw') out.push(`[file ${p.filename || ''} (${p.mediaType || 'binary'}), ${c.value.length} bytes]`);
  }
  return out.join('\n');
}

export function artifactsText(artifacts: readonly Artifact[] | undefined): string {
  return (artifacts ?? []).map((a) => partsText(a.parts)).filter(Boolean).join('\n');
}

/** What a remote task answered: its artifacts, else its status message, else its last agent message. */
export function taskAnswer(task: Task): string {
  const fromArtifacts = artifactsText(task.artifacts);
  if (fromArtifacts) return fromArtifacts;
  const status = partsText(task.status?.message?.parts);
  if (status) return status;
  const lastAgent = [...(task.history ?? [])].reverse().find((m) => m.role === Role.ROLE_AGENT);
  return partsText(lastAgent?.parts);
}

export function stateName(state: TaskState | undefined): string {
  return state === undefined ? 'unknown' : (TaskState[state] ?? String(state)).replace(/^TASK_STATE_/, '').toLowerCase();
}

export function isTask(x: Message | Task): x is Task {
  return 'status' in x && 'artifacts' in x;
}
