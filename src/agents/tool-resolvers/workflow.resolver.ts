import { AppError } from '../../errors.js';
import type { ResolvedToolEntry, ToolEntryResolver } from '../../tools/tool-kinds.js';

/** docs/contract.md#workflows: `workflow` entries are refused until workflows exist. */
export class WorkflowToolResolver implements ToolEntryResolver<{ type: 'workflow'; workflow_id: string }> {
  async resolve(_organizationId: string, _entry: unknown, loc: (string | number)[]): Promise<ResolvedToolEntry> {
    throw AppError.invalid([...loc, 'workflow_id'], 'workflows are not supported yet');
  }
}
