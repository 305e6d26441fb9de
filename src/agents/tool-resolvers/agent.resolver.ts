import { AppError } from '../../errors.js';
import type { ResolvedToolEntry, ToolEntryResolver } from '../../tools/tool-kinds.js';

/** What the sub-agent resolver needs: the live agent's name, or undefined when it does not exist in the organization. */
export interface AgentNameLookup {
  findName(organizationId: string, agentId: string): Promise<string | undefined>;
}

/**
 * `{type:"agent", agent_id}` -> a graph item of type `agent` (spec 2.4: no attached_tools entry). An agent naming
 * itself is refused by the agents service, which knows which agent is being edited.
 */
export class AgentToolResolver implements ToolEntryResolver<{ type: 'agent'; agent_id: string }> {
  constructor(private readonly agents: AgentNameLookup) {}

  async resolve(organizationId: string, entry: { agent_id: string }, loc: (string | number)[]): Promise<ResolvedToolEntry> {
    const name = await this.agents.findName(organizationId, entry.agent_id);
    if (name === undefined) throw AppError.invalid([...loc, 'agent_id'], `agent '${entry.agent_id}' not found`);
    return { graph: [{ item_id: entry.agent_id, name, type: 'agent', sub_type: null, targets: [], settings: null, is_first: false }] };
  }
}
