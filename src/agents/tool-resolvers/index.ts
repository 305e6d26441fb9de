import type { ToolEntryResolver } from '../../tools/tool-kinds.js';
import type { ToolEntryType } from '../agent.schemas.js';
import { AgentToolResolver, type AgentNameLookup } from './agent.resolver.js';

/**
 * Create-time resolvers of `tools` entries (spec 2.3), one per entry type (docs/architecture.md rule 8). The agents
 * module builds this object and each tool-kind domain's module adds its line:
 *
 *   toolResolvers.action = new ActionToolResolver(...);                  // connectors.module.ts
 *   toolResolvers.custom_function = new CustomFunctionToolResolver(...);  // custom-functions.module.ts
 *
 * Each resolver receives the entry as validated by `ToolEntry` (src/agents/agent.schemas.ts) and the `loc` of the
 * entry (e.g. ['body','tools',3]); it throws `AppError.invalid([...loc, '<field>'], '...')` for anything that does not
 * exist in the organization. Explicit `attached_tools` are routed through `action` ({type:'action', connection_id,
 * operation_ids}) or, for the custom-function connector, `custom_function` ({type:'custom_function',
 * custom_function_id}) once per function id. A type without a resolver is refused: "tool type 'x' is not available".
 */
export type ToolResolverRegistry = Partial<Record<ToolEntryType, ToolEntryResolver>>;

export function createToolResolverRegistry(deps: { agents: AgentNameLookup }): ToolResolverRegistry {
  return {
    agent: new AgentToolResolver(deps.agents),
    // workflow: registered by the workflows section of the container (src/workflows/workflows.module.ts)
  };
}
