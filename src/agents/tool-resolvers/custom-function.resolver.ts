import { AppError } from '../../errors.js';
import type { ResolvedToolEntry, ToolEntryResolver } from '../../tools/tool-kinds.js';

/** The connector id that custom functions live under in `attached_tools` (spec 2.4). */
export const CUSTOM_FUNCTIONS_CONNECTOR = 'service-custom-functions';

export interface CustomFunctionLookup {
  findMany(organizationId: string, ids: string[]): Promise<{ id: string; name: string }[]>;
}

/**
 * `{type:"custom_function", custom_function_id}` -> an attached_tools entry under `service-custom-functions` plus a
 * graph item of type `tool`, sub_type `custom_function` (spec 2.4). Functions in status `error` may be attached:
 * fixing the code makes them callable without touching the agent; calling them meanwhile fails with the reason.
 */
export class CustomFunctionToolResolver implements ToolEntryResolver<{ custom_function_id: string }> {
  constructor(private readonly functions: CustomFunctionLookup) {}

  async resolve(organizationId: string, entry: { custom_function_id: string }, loc: (string | number)[]): Promise<ResolvedToolEntry> {
    const [f] = await this.functions.findMany(organizationId, [entry.custom_function_id]);
    if (!f) throw AppError.invalid([...loc, 'custom_function_id'], `custom function '${entry.custom_function_id}' not found`);
    return {
      attached: { id: CUSTOM_FUNCTIONS_CONNECTOR, operation_ids: [f.id] },
      graph: [{ item_id: f.id, name: f.name, type: 'tool', sub_type: 'custom_function', targets: [], settings: null, is_first: false }],
    };
  }
}
