import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { newId } from '../lib/ids.js';
import type { AgentConfig, ToolEntry } from './agent.schemas.js';
import { redactSecrets, sealSecrets } from './agent-secrets.js';
import type { AgentStore } from './agent-store.js';
import { mergeAttached, mergeGraph, removeTool, type AgentToolsResolver } from './agent-tools.js';
import { refuseOrchestrationEntry } from './agent-type-rules.js';
import type { AgentRow } from './agents.repository.js';

export interface AgentToolsView {
  tools: unknown[];
  attached_tools: unknown[];
  graph: unknown[];
}

/** The tools of one agent, attached and detached one at a time (the working copy: the draft when there is one). */
export class AgentToolEdits {
  constructor(
    private readonly store: AgentStore,
    private readonly tools: AgentToolsResolver,
  ) {}

  async getTools(organizationId: string, id: string, viewer?: Principal): Promise<AgentToolsView> {
    return toolsView(await this.store.load(organizationId, id, viewer));
  }

  async attachTool(organizationId: string, id: string, entry: ToolEntry, opts: { deploy: boolean }, viewer?: Principal): Promise<AgentToolsView> {
    const row = await this.store.load(organizationId, id, viewer);
    refuseOrchestrationEntry((row.draft ?? row.config).type, entry);
    await this.store.checkSubAgents(organizationId, row.access.owner, [entry], ['body'], false);
    const resolved = await this.tools.resolveEntry(organizationId, entry, ['body'], id);
    const base = row.draft ?? row.config;
    const next: AgentConfig = {
      ...base,
      tools: [...base.tools, entry],
      attached_tools: resolved.attached ? mergeAttached(base.attached_tools, resolved.attached) : base.attached_tools,
      graph: mergeGraph(base.graph, resolved.graph, true).map((g) => ({ ...g, id: g.id ?? newId() })),
    };
    await this.store.persist(row, sealSecrets(next, this.store.secretBox, base as unknown as Record<string, unknown>), opts.deploy);
    return this.getTools(organizationId, id);
  }

  async detachTool(organizationId: string, id: string, toolId: string, opts: { deploy: boolean }, viewer?: Principal): Promise<AgentToolsView> {
    const row = await this.store.load(organizationId, id, viewer);
    const base = row.draft ?? row.config;
    const { set, removed } = removeTool({ tools: base.tools, attached_tools: base.attached_tools, graph: base.graph, skills: base.skills }, toolId);
    if (!removed) throw AppError.notFound('Tool');
    await this.store.persist(row, { ...base, ...set } as AgentConfig, opts.deploy);
    return this.getTools(organizationId, id);
  }
}

function toolsView(row: AgentRow): AgentToolsView {
  const cfg = redactSecrets((row.draft ?? row.config) as unknown as Record<string, unknown>) as unknown as AgentConfig;
  return { tools: cfg.tools, attached_tools: cfg.attached_tools, graph: cfg.graph };
}

