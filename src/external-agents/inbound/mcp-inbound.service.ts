import type { InboundCall } from '../../tasks/call-depth.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AgentsService } from '../../agents/agents.service.js';
import type { Principal } from '../../auth/principal.js';
import { isAppError, logOperatorDetail } from '../../errors.js';
import type { Logger } from '../../lib/logger.js';
import { isValidTaskId } from '../../tasks/task-ids.js';
import { FINAL_STATUSES, type TaskSubmitter } from '../../tasks/task.types.js';

export interface McpInboundDeps {
  agents: AgentsService;
  /** Each tool call submits a task and waits for it (TaskSubmissions). */
  tasks: TaskSubmitter;
  /** How long a tool call waits for its run (AGENTRY_SYNC_TIMEOUT_MS). */
  syncTimeoutMs: number;
  log: Logger;
}

/** Agents listed as tools at most (pages of 50): a tool list is read by a model, and must stay bounded. */
const MAX_TOOLS = 200;
const PAGE = 50;
const MAX_PROMPT_CHARS = 1_000_000;

interface AgentTool {
  tool: Tool;
  agentId: string;
}

/**
 * The organization's discoverable agents as one MCP server (streamable HTTP, stateless: every POST is answered on
 * its own, so any API process can take any request): one tool per agent, whose call runs the agent as an ordinary
 * task with `source` `mcp` and returns its result. Why one tool per agent, not the agents' own tools: see
 * docs/decisions.md#external-agents-a2a-and-mcp.
 */
export class McpInboundService {
  constructor(private readonly deps: McpInboundDeps) {}

  async handle(principal: Principal, request: Request, parsedBody: unknown, inbound: InboundCall = {}): Promise<Response> {
    // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE); the spec's answer is 405.
    if (request.method !== 'POST') {
      return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; use POST' } }), {
        status: 405,
        headers: { allow: 'POST', 'content-type': 'application/json' },
      });
    }
    const server = new Server({ name: 'agentry', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: (await this.tools(principal)).map((t) => t.tool) }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => this.call(principal, req.params.name, req.params.arguments ?? {}, extra.signal, inbound));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      await server.close().catch(() => undefined);
    }
  }

  /** Discoverable, active agents open to API callers, each with a tool name unique in the list. */
  private async tools(viewer: Principal): Promise<AgentTool[]> {
    const out: AgentTool[] = [];
    const names = new Set<string>();
    for (let page = 1; out.length < MAX_TOOLS; page++) {
      const { items, total_pages } = await this.deps.agents.listFull(viewer, page, PAGE);
      for (const a of items) {
        if (a.discoverable === false || a.status !== 'ACTIVE' || a.developer_access === false || out.length >= MAX_TOOLS) continue;
        let name = toolName(a.name);
        if (names.has(name)) name = `${name.slice(0, 56)}_${a.id.replace(/-/g, '').slice(-7)}`;
        names.add(name);
        const description = [a.description, `Runs the Agentry agent "${a.name}" and returns its answer.`].filter(Boolean).join('\n\n');
        out.push({
          agentId: a.id,
          tool: {
            name,
            title: a.name,
            description,
            inputSchema: {
              type: 'object',
              properties: {
                prompt: { type: 'string', description: 'What to ask the agent.' },
                task_id: { type: 'string', description: 'Continue an earlier conversation: the task_id a previous call returned.' },
              },
              required: ['prompt'],
            },
          },
        });
      }
      if (page >= total_pages) break;
    }
    return out;
  }

  private async call(principal: Principal, name: string, args: Record<string, unknown>, signal: AbortSignal, inbound: InboundCall): Promise<CallToolResult> {
    const fail = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });
    const target = (await this.tools(principal)).find((t) => t.tool.name === name);
    if (!target) return fail(`There is no agent tool named "${name}"`);
    const prompt = args.prompt;
    if (typeof prompt !== 'string' || !prompt.trim()) return fail('prompt (a non-empty string) is required');
    if (prompt.length > MAX_PROMPT_CHARS) return fail(`prompt is longer than ${MAX_PROMPT_CHARS} characters`);
    const taskId = args.task_id;
    if (taskId !== undefined && (typeof taskId !== 'string' || !isValidTaskId(taskId))) return fail('task_id must be 1-128 printable characters');
    try {
      const task = await this.deps.tasks.submit({ organizationId: principal.organizationId, agentId: target.agentId, taskId, source: 'mcp', text: prompt, user: null, awaited: true, caller: principal, userToken: inbound.userToken, callDepth: inbound.callDepth });
      const done = await this.deps.tasks.waitForFinal(principal.organizationId, task.id, { timeoutMs: this.deps.syncTimeoutMs, signal, subExecutions: false, submitted: task });
      const structuredContent = { task_id: done.id, status: done.status, result: done.result };
      if (!FINAL_STATUSES.has(done.status)) {
        return { content: [{ type: 'text', text: `The task ${done.id} is still ${done.status}; read its result later with GET /v1/tasks/${done.id}` }], structuredContent, isError: true };
      }
      return { content: [{ type: 'text', text: done.result ?? '' }], structuredContent, isError: done.status !== 'completed' };
    } catch (e) {
      if (isAppError(e)) {
        logOperatorDetail(this.deps.log, e, { agent_id: target.agentId });
        return fail(e.message);
      }
      this.deps.log.error({ err: e, agent_id: target.agentId }, 'MCP tool call failed');
      return fail('The agent could not be run because of an internal error');
    }
  }
}

/** MCP clients accept tool names of [A-Za-z0-9_-], up to 64 characters. */
function toolName(agentName: string): string {
  const slug = agentName
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
  return slug || 'agent';
}
