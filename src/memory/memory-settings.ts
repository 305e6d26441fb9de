import type { AgentConfig } from '../agents/agent.schemas.js';

/**
 * The memory switches of an agent's agno_settings (spec 2.5), from the typed configuration.
 *
 * - user_memories: facts about the task's user are extracted after each completed task and recalled in later tasks.
 * - agent_memories: the same for facts that hold for every user of the agent (shared memories).
 * - agentic_memory: the agent gets tools to add, update and forget memories itself during a run.
 * - add_user_to_context (default true): the invocation's user fields reach the model as "About the user".
 * - session_summaries: earlier runs beyond num_history_runs are summarised instead of dropped (runtime).
 */
export interface MemorySettings {
  userMemories: boolean;
  agentMemories: boolean;
  agenticMemory: boolean;
  addUserToContext: boolean;
}

export function memorySettings(agent: Pick<AgentConfig, 'agno_settings'>): MemorySettings {
  const a = agent.agno_settings;
  return {
    userMemories: a.user_memories,
    agentMemories: a.agent_memories,
    agenticMemory: a.agentic_memory,
    addUserToContext: a.add_user_to_context,
  };
}

/** Memories are recalled into the prompt when any memory switch is on. */
export function recallsMemories(s: MemorySettings): boolean {
  return s.userMemories || s.agentMemories || s.agenticMemory;
}
