import type { RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';
import { memorySettings } from '../../memory/memory-settings.js';
import type { MemoryChanges, MemoryService } from '../../memory/memory.service.js';
import { MEMORY_LIMITS } from '../../memory/memory.service.js';

/**
 * agno_settings.agentic_memory: the agent manages its memories itself with three tools. `scope` user (the task's
 * user; needs a user id) or agent (shared by every user; needs agent_memories). A tool reaches only memories of
 * this agent and of the task's user or the shared ones: an id of anyone else's is "not found".
 */
export class MemoryToolProvider implements RuntimeToolProvider {
  constructor(private readonly memories: Pick<MemoryService, 'apply' | 'ownerOf'>) {}

  buildTools(agent: RunContextAgent, ctx: ToolCallContext): RuntimeTool[] {
    const s = memorySettings(agent);
    if (!s.agenticMemory) return [];
    const userId = ctx.userId && ctx.userId.trim() ? ctx.userId : null;
    const scopes = [...(userId ? ['user'] : []), ...(s.agentMemories ? ['agent'] : [])];
    if (!scopes.length) return [];
    const owners = new Set<string | null>([...(userId ? [userId] : []), ...(s.agentMemories ? [null] : [])]);
    const change = async (c: ToolCallContext, owner: string | null, changes: Partial<MemoryChanges>) => {
      const r = await this.memories.apply(c.organizationId, agent.id, owner, { add: [], update: [], delete: [], ...changes }, 'agentic', c.taskId);
      if (r.skipped.length) throw new Error(r.skipped.join('; '));
      return { added: r.added, updated: r.updated, deleted: r.deleted };
    };
    const ownerOf = async (c: ToolCallContext, id: string) => {
      const owner = await this.memories.ownerOf(c.organizationId, agent.id, id);
      if (owner === undefined || !owners.has(owner)) throw new Error(`No memory with id ${id}`);
      return owner;
    };
    const scopeProp = { type: 'string', enum: scopes, description: 'user: about the person you are talking to; agent: true for every user' };
    const content = { type: 'string', maxLength: MEMORY_LIMITS.contentChars, description: 'One short fact, in a full sentence' };
    const id = { type: 'string', description: 'The id shown in brackets in your memories' };
    return [
      {
        name: 'add_memory',
        description: 'Remember a fact for later conversations (a preference, a detail about the user, a lesson learned).',
        inputSchema: { type: 'object', properties: { content, scope: scopeProp }, required: ['content'], additionalProperties: false },
        mutating: false,
        execute: async (args, c) => {
          const scope = typeof args.scope === 'string' ? args.scope : scopes[0];
          if (!scopes.includes(scope!)) throw new Error(`scope must be one of ${scopes.join(', ')}`);
          return change(c, scope === 'user' ? userId : null, { add: [String(args.content ?? '')] });
        },
      },
      {
        name: 'update_memory',
        description: 'Replace the text of one of your memories that changed or was wrong.',
        inputSchema: { type: 'object', properties: { memory_id: id, content }, required: ['memory_id', 'content'], additionalProperties: false },
        mutating: false,
        execute: async (args, c) => {
          const mid = String(args.memory_id ?? '');
          return change(c, await ownerOf(c, mid), { update: [{ id: mid, content: String(args.content ?? '') }] });
        },
      },
      {
        name: 'forget_memory',
        description: 'Delete one of your memories (no longer true, or the user asked you to forget it).',
        inputSchema: { type: 'object', properties: { memory_id: id }, required: ['memory_id'], additionalProperties: false },
        mutating: false,
        execute: async (args, c) => {
          const mid = String(args.memory_id ?? '');
          return change(c, await ownerOf(c, mid), { delete: [mid] });
        },
      },
    ];
  }
}
