import type { Awaitable } from '../lib/awaitable.js';
import type { ContextContributor, ContextContributorInput, ContextSection } from '../runtime/context-contributors.js';
import type { Task } from '../tasks/task.types.js';
import { memorySettings, recallsMemories, type MemorySettings } from './memory-settings.js';
import type { MemoryService } from './memory.service.js';

/** The user a task runs for: the task's user_id, else the invocation's user.id. */
export function taskUserId(task: Task): string | null {
  const id = task.user_id ?? task.input.user?.id ?? null;
  return typeof id === 'string' && id.trim() ? id : null;
}

/**
 * Recalled memories in the system prompt: the user's (user_memories, agentic_memory) and the agent's shared ones
 * (agent_memories, agentic_memory). With agentic_memory each line carries its id, for the update and forget tools.
 */
export class MemoryContext implements ContextContributor {
  constructor(private readonly memories: Pick<MemoryService, 'recall'>) {}

  contribute({ agent, task }: ContextContributorInput): Awaitable<ContextSection | null> {
    const s = memorySettings(agent);
    if (!recallsMemories(s)) return null;
    return this.sectionFor(agent.id, task, s);
  }

  private async sectionFor(agentId: string, task: Task, s: MemorySettings): Promise<ContextSection | null> {
    const userId = taskUserId(task);
    const recalled = await this.memories.recall(task.organization_id, agentId, userId, task.input.text ?? '', {
      user: s.userMemories || s.agenticMemory,
      shared: s.agentMemories || s.agenticMemory,
    });
    if (!recalled.length) return null;
    const line = (m: (typeof recalled)[number]) => `- ${s.agenticMemory ? `[${m.id}] ` : ''}${m.content}`;
    const user = recalled.filter((m) => m.userId !== null);
    const shared = recalled.filter((m) => m.userId === null);
    const parts = ['What you remember from earlier conversations. Use it when it helps; it may be out of date.'];
    if (user.length) parts.push(`About this user:\n${user.map(line).join('\n')}`);
    if (shared.length) parts.push(`For every user:\n${shared.map(line).join('\n')}`);
    // Written by the model or through the API from what users said: content, screened by the guards (injection).
    return { title: 'Memories', text: parts.join('\n\n'), guardOrigin: 'history' };
  }
}

const USER_FIELD_CHARS = 200;

function field(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  // One line, bounded: the fields come from the caller and must not reshape the prompt.
  const t = v.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, USER_FIELD_CHARS);
  return t || null;
}

/**
 * The invocation's user fields (user_first_name, user_last_name, user_email, user_id) as a short "About the user"
 * section, "for personalization" (spec 4.5). agno_settings.add_user_to_context false turns it off.
 */
export class UserContext implements ContextContributor {
  contribute({ agent, task }: ContextContributorInput): ContextSection | null {
    if (!memorySettings(agent).addUserToContext) return null;
    const u = task.input.user;
    const name = [field(u?.first_name), field(u?.last_name)].filter(Boolean).join(' ');
    const email = field(u?.email);
    const id = field(taskUserId(task));
    const lines = [name && `Name: ${name}`, email && `E-mail: ${email}`, id && `User id: ${id}`].filter(Boolean);
    if (!lines.length) return null;
    return {
      title: 'About the user',
      text: `The person you are talking to (as given by the application that called you):\n${lines.join('\n')}`,
      // The caller's text (an e-mail address, above all): screened like the input, so PII masking and refusal apply.
      guardOrigin: 'user',
    };
  }
}
