import { z } from 'zod';
import { isoTime } from '../lib/clock.js';
import { PageQuery } from '../http/router.js';
import { MEMORY_LIMITS, type Memory } from './memory.service.js';

const id = () => z.string().min(1).max(256);
const content = () => z.string().min(1).max(MEMORY_LIMITS.contentChars);

export const AgentMemoryParams = z.strictObject({ agent_id: id() });
export const AgentMemoryIdParams = z.strictObject({ agent_id: id(), memory_id: id() });
export const UserMemoryParams = z.strictObject({ user_id: id() });
export const UserMemoryIdParams = z.strictObject({ user_id: id(), memory_id: id() });

/** `scope`: `user` (memories about users; with `user_id`, one user's), `agent` (shared by every user), or both. */
export const AgentMemoryQuery = PageQuery.extend({
  user_id: id().optional(),
  scope: z.enum(['user', 'agent']).optional(),
});
export const UserMemoryQuery = PageQuery.extend({ agent_id: id().optional() });

/** Without `user_id`, an agent memory (shared by every user of the agent). */
export const AgentMemoryCreateBody = z.strictObject({ content: content(), user_id: id().nullable().optional() });
export const UserMemoryCreateBody = z.strictObject({ agent_id: id(), content: content() });
export const MemoryPatchBody = z.strictObject({ content: content() });

export function presentMemory(m: Memory) {
  return {
    id: m.id,
    agent_id: m.agentId,
    user_id: m.userId,
    scope: m.userId === null ? 'agent' : 'user',
    content: m.content,
    source: m.source,
    task_id: m.taskId,
    created_at: isoTime(m.createdAt),
    updated_at: isoTime(m.updatedAt),
  };
}
