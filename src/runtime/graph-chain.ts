import type { GraphItem, RuntimeTool } from '../tools/tool-kinds.js';
import type { ForcedChoice, ToolGate } from './tool-gates.js';

/**
 * The agent's `graph` at run time (spec 2.4; docs/planning-and-chaining.md):
 *
 * - `targets`: after a call of an item's tool succeeds, each target item runs next, one forced model step each, in
 *   the declared order (breadth first across a run). The model writes the successor's arguments, having seen the
 *   predecessor's result; it cannot skip it (tool_choice names the tool) and any other call in that step is refused.
 *   A failed call starts no successors: the model sees the error and decides (a successful retry starts them).
 * - `is_first`: while no `is_first` item has run successfully in this run, calls of the graph's other items are
 *   refused with a tool error naming the entry points. Tools that are not graph items (knowledge, memory, planning,
 *   schedules) are not restricted. The model may still answer without calling any tool.
 *
 * Targets name a graph item by its `id` or its `item_id`. A target whose tools are not offered in this run (an MCP
 * server that is down, a deleted function) is skipped. Cycles are allowed: the run's tool-call and iteration limits
 * bound them like any other loop.
 */

interface Pending {
  item: GraphItem;
  key: string;
  tools: string[];
  /** The tool whose success queued this step. */
  after: string;
}

/** How often the model may answer instead of calling a pending successor before the chain gives up on it. */
const ANSWER_OBJECTIONS_PER_STEP = 1;

const keyOf = (g: GraphItem) => g.id ?? g.item_id;

export class GraphChain implements ToolGate {
  private readonly toolsByItem = new Map<string, string[]>();
  private readonly itemByTool = new Map<string, GraphItem>();
  private readonly queue: Pending[] = [];
  private readonly firstKeys = new Set<string>();
  private firstOpen: boolean;
  /** The pending head ran in this model step: further calls of the step wait for their own step. */
  private stepTaken = false;
  private objections = 0;

  constructor(private readonly graph: GraphItem[], tools: RuntimeTool[]) {
    for (const t of tools) {
      if (!t.graphItemId) continue;
      const item = graph.find((g) => g.id === t.graphItemId || g.item_id === t.graphItemId);
      if (!item) continue;
      const key = keyOf(item);
      this.toolsByItem.set(key, [...(this.toolsByItem.get(key) ?? []), t.name]);
      this.itemByTool.set(t.name, item);
    }
    for (const g of graph) if (g.is_first === true && this.toolsByItem.has(keyOf(g))) this.firstKeys.add(keyOf(g));
    this.firstOpen = this.firstKeys.size > 0;
  }

  /** Whether the graph changes anything in this run (no targets and no is_first: the gate is left out). */
  get active(): boolean {
    return this.firstOpen || this.graph.some((g) => Array.isArray(g.targets) && g.targets.length > 0 && this.toolsByItem.has(keyOf(g)));
  }

  choice(): ForcedChoice | undefined {
    const head = this.queue[0];
    if (!head) return undefined;
    return head.tools.length === 1 ? { type: 'tool', toolName: head.tools[0] } : 'required';
  }

  refuse(tool: RuntimeTool | undefined, toolName: string): string | undefined {
    // The run's bookkeeping (deep planning's checklist) is never in the way of a chain.
    if (tool?.uncounted) return undefined;
    if (this.stepTaken) return `The agent's graph runs one declared step per turn; "${toolName}" was not executed. Call it again in your next turn if it is still needed.`;
    const head = this.queue[0];
    if (head) {
      if (head.tools.includes(toolName)) return undefined;
      return `The agent's graph runs ${names(head.tools)} next (declared after "${head.after}"): call it now. "${toolName}" was not executed.`;
    }
    if (this.firstOpen) {
      const item = this.itemByTool.get(toolName);
      if (item && !this.firstKeys.has(keyOf(item))) {
        const first = [...this.firstKeys].flatMap((k) => this.toolsByItem.get(k) ?? []);
        return `This agent's graph starts with ${names(first)}: call one of them first. "${toolName}" was not executed.`;
      }
    }
    return undefined;
  }

  annotate(toolName: string): Record<string, unknown> | undefined {
    const head = this.queue[0];
    if (head && head.tools.includes(toolName)) return { graph: { chained_after: head.after, graph_item_id: head.key, step: 'target' } };
    const item = this.itemByTool.get(toolName);
    if (this.firstOpen && item && this.firstKeys.has(keyOf(item))) return { graph: { graph_item_id: keyOf(item), step: 'first' } };
    return undefined;
  }

  record(toolName: string, outcome: { isError: boolean; refused: boolean }): void {
    if (outcome.refused) return;
    const head = this.queue[0];
    const item = this.itemByTool.get(toolName);
    if (head && head.tools.includes(toolName)) {
      this.queue.shift();
      this.stepTaken = true;
      this.objections = 0;
    }
    if (!item || outcome.isError) return;
    if (this.firstKeys.has(keyOf(item))) this.firstOpen = false;
    for (const target of item.targets ?? []) {
      for (const next of this.graph.filter((g) => g.id === target || g.item_id === target)) {
        const key = keyOf(next);
        const tools = this.toolsByItem.get(key);
        if (!tools || this.queue.some((p) => p.key === key)) continue;
        this.queue.push({ item: next, key, tools, after: toolName });
      }
    }
  }

  endStep(): void {
    this.stepTaken = false;
  }

  objectToAnswer(): string | undefined {
    const head = this.queue[0];
    if (!head) return undefined;
    if (this.objections >= ANSWER_OBJECTIONS_PER_STEP) {
      // The model would not run it: the rest of the chain is dropped rather than looping until the limits.
      this.queue.length = 0;
      return undefined;
    }
    this.objections++;
    return `Before answering, call ${names(head.tools)}: the agent's graph declares it runs after "${head.after}".`;
  }
}

function names(tools: string[]): string {
  return tools.map((t) => `"${t}"`).join(' or ');
}
