import { AppError } from '../../errors.js';
import type { ResolvedToolEntry, ToolEntryResolver } from '../../tools/tool-kinds.js';

/** What the workflow resolver needs: the live workflow's name, or undefined when it does not exist in the organization. */
export interface WorkflowNameLookup {
  describe(organizationId: string, workflowId: string): Promise<{ name: string } | undefined>;
}

/**
 * `{type:"workflow", workflow_id}` -> a graph item of type `workflow` (no attached_tools entry), run at call time by
 * the workflow tool provider (src/runtime/tools/workflow.tools.ts) as a child task of the workflow's agent.
 */
export class WorkflowToolResolver implements ToolEntryResolver<{ type: 'workflow'; workflow_id: string }> {
  constructor(private readonly workflows: WorkflowNameLookup) {}

  async resolve(organizationId: string, entry: { workflow_id: string }, loc: (string | number)[]): Promise<ResolvedToolEntry> {
    const found = await this.workflows.describe(organizationId, entry.workflow_id);
    if (!found) throw AppError.invalid([...loc, 'workflow_id'], `workflow '${entry.workflow_id}' not found`);
    return { graph: [{ item_id: entry.workflow_id, name: found.name, type: 'workflow', sub_type: null, targets: [], settings: null, is_first: false }] };
  }
}
