import type { Awaitable } from '../../lib/awaitable.js';
import type { RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';
import { toolName } from './index.js';

/** Custom functions as the runtime needs them. */
export interface CustomFunctionRuntime {
  findMany(
    organizationId: string,
    ids: string[],
  ): Promise<{ id: string; name: string; description: string; inputSchema: Record<string, unknown> }[]>;
  /** Resolves with the function's result or throws an Error whose message is meant for the model. */
  call(organizationId: string, id: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>;
}

const CONNECTOR_IDS: ReadonlySet<string> = new Set(['service-custom-functions', 'xpander-custom-functions']);

/**
 * Custom functions attached to the agent (graph items `tool`/`custom_function`, and attached_tools entries under the
 * custom-function connector whose graph items were not created) become tools that run in the QuickJS sandbox.
 */
export class CustomFunctionToolProvider implements RuntimeToolProvider {
  constructor(private readonly functions: CustomFunctionRuntime) {}

  buildTools(agent: RunContextAgent, ctx: ToolCallContext): Awaitable<RuntimeTool[]> {
    const graphIds = new Map<string, string>();
    for (const g of agent.graph) {
      if (g.type === 'tool' && g.sub_type === 'custom_function' && g.item_id) graphIds.set(g.item_id, g.id ?? g.item_id);
    }
    for (const a of agent.attached_tools) {
      if (!CONNECTOR_IDS.has(a.id)) continue;
      for (const id of a.operation_ids ?? []) if (!graphIds.has(id)) graphIds.set(id, id);
    }
    if (!graphIds.size) return [];
    return this.toolsFor(graphIds, ctx);
  }

  private async toolsFor(graphIds: ReadonlyMap<string, string>, ctx: ToolCallContext): Promise<RuntimeTool[]> {
    // A function deleted after it was attached simply is not offered.
    const found = await this.functions.findMany(ctx.organizationId, [...graphIds.keys()]);
    return found.map((f) => ({
      name: toolName(f.name, `function_${f.id.slice(0, 8)}`),
      description: f.description || `Custom function ${f.name}`,
      inputSchema: Object.keys(f.inputSchema).length ? { ...f.inputSchema, type: 'object' } : { type: 'object', properties: {}, additionalProperties: true },
      // Functions have no network or file access; their only effect is their result.
      mutating: false,
      graphItemId: graphIds.get(f.id),
      execute: (args, callCtx) => this.functions.call(callCtx.organizationId, f.id, args, callCtx.signal),
    }));
  }
}
