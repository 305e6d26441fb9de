import { allOf, onceReady, settled, type Awaitable } from '../../lib/awaitable.js';
import type { RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';

/**
 * The run-time tool registry (docs/architecture.md rule 8): one RuntimeToolProvider per kind of graph item, each in its
 * own file beside this one (`action.tools.ts`, `agent.tools.ts`, `mcp.tools.ts`, ...).
 *
 * Providers need their domain's services, which the container builds in that domain's section; so a domain
 * registers its provider there with one line:
 *
 *     c.runtime.tools.register('mcp', new McpToolProvider(mcpService));   // or runtimeTools.register(...)
 *
 * A kind nobody registered simply offers no tools.
 */

export const RUNTIME_TOOL_KINDS = ['action', 'custom_function', 'mcp', 'agent', 'skill', 'knowledge', 'workflow', 'schedule', 'memory'] as const;
export type RuntimeToolKind = (typeof RUNTIME_TOOL_KINDS)[number];

/** Tool names every provider accepts (OpenAI, Anthropic and Gemini share this subset). */
export const TOOL_NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;

/** A provider-safe tool name from any label: `Send email!` -> `Send_email`. */
export function toolName(label: string, fallback = 'tool'): string {
  const cleaned = label.replace(/[^a-zA-Z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);
  return cleaned || fallback;
}

/** Thrown when a provider cannot build its tools; the run ends `error` with this message. */
export class ToolBuildError extends Error {
  constructor(kind: string, cause: unknown) {
    super(`Could not prepare the agent's ${kind} tools: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'ToolBuildError';
  }
}

export class RuntimeToolRegistry {
  private readonly providers = new Map<RuntimeToolKind, RuntimeToolProvider>();

  register(kind: RuntimeToolKind, provider: RuntimeToolProvider): void {
    this.providers.set(kind, provider);
  }

  has(kind: RuntimeToolKind): boolean {
    return this.providers.has(kind);
  }

  /**
   * Every registered provider's tools for this agent, with names made unique (a clash gets `_2`, `_3`, ...) so
   * one tool never shadows another. Synchronous when every provider answers at once (an agent without tools of
   * their kinds); every provider is asked even when one fails, as with Promise.all.
   */
  buildTools(agent: RunContextAgent, ctx: ToolCallContext): Awaitable<RuntimeTool[]> {
    const built: Awaitable<RuntimeTool[]>[] = [];
    for (const [kind, p] of this.providers) {
      built.push(
        settled(
          () => p.buildTools(agent, ctx),
          (e) => {
            if (ctx.signal.aborted) throw e;
            throw new ToolBuildError(kind, e);
          },
        ),
      );
    }
    return onceReady(allOf(built), uniquelyNamed);
  }
}

function uniquelyNamed(built: RuntimeTool[][]): RuntimeTool[] {
  const seen = new Set<string>();
  const out: RuntimeTool[] = [];
  for (const list of built) {
    for (const tool of list) {
      const base = TOOL_NAME_RE.test(tool.name) ? tool.name : toolName(tool.name);
      let name = base;
      for (let i = 2; seen.has(name); i++) name = `${base.slice(0, 60)}_${i}`;
      seen.add(name);
      out.push(name === tool.name ? tool : { ...tool, name, execute: tool.execute.bind(tool) });
    }
  }
  return out;
}
