import { runnableAgent } from '../support/runnable-agent.js';
import type { Container } from '../../src/container.js';
import type { GraphItem, RuntimeTool, ToolCallContext } from '../../src/tools/tool-kinds.js';

export interface BuiltMcpTools {
  tools: RuntimeTool[];
  item: GraphItem;
  events: { type: string; data: Record<string, unknown> }[];
  ctx: ToolCallContext;
  call(name: string, args?: Record<string, unknown>): Promise<unknown>;
}

/**
 * Resolves an `mcp` tool entry the way agent creation does, then builds the run's tools the way the runtime does
 * (the registered providers, with a context whose events are collected).
 */
export async function buildMcpTools(c: Container, organizationId: string, entry: Record<string, unknown>, userTokens: Record<string, string> = {}): Promise<BuiltMcpTools> {
  const resolved = await c.toolResolvers.mcp!.resolve(organizationId, { type: 'mcp', ...entry }, ['body', 'tools', 0]);
  const events: BuiltMcpTools['events'] = [];
  const ctx: ToolCallContext = {
    organizationId,
    taskId: 'task-mcp',
    agentId: 'agent-mcp',
    signal: new AbortController().signal,
    userTokens,
    emit: async (type, data) => void events.push({ type, data }),
  };
  const agent = runnableAgent({ id: 'agent-mcp', organization_id: organizationId, graph: resolved.graph });
  const tools = await c.runtime.tools.buildTools(agent, ctx);
  return {
    tools,
    item: resolved.graph[0],
    events,
    ctx,
    async call(name, args = {}) {
      const tool = tools.find((t) => t.name === name);
      if (!tool) throw new Error(`no tool ${name}; have ${tools.map((t) => t.name).join(', ')}`);
      return tool.execute(args, ctx);
    },
  };
}
