import type { AgentAccess } from '../auth/agent-access.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { PublicUrls } from '../lib/urls.js';
import type { Page } from '../http/router.js';
import type { AgentConfig, CreateAgentInput, PatchAgentInput, ToolEntry } from './agent.schemas.js';
import type { AgentView, presentAgentSummary } from './agent.presenter.js';
import { AgentReads, type RunnableAgent, type SubmittableAgent } from './agent-reads.js';
import { AgentStore } from './agent-store.js';
import { AgentToolEdits, type AgentToolsView } from './agent-tool-edits.js';
import { AgentToolsResolver, type KnowledgeBaseLookup } from './agent-tools.js';
import { AgentWrites, type SecretExists, type UpdateOptions } from './agent-writes.js';
import type { AgentsRepository } from './agents.repository.js';
import type { ToolResolverRegistry } from './tool-resolvers/index.js';
import type { OutputSchemaCheck } from '../lib/schema-checker.js';

export type { RunnableAgent, SubmittableAgent } from './agent-reads.js';
export type { AgentToolsView } from './agent-tool-edits.js';

export interface AgentsServiceDeps {
  repo: AgentsRepository;
  clock: Clock;
  urls: PublicUrls;
  secretBox: SecretBox;
  toolResolvers: ToolResolverRegistry;
  /** Rules of other domains on the resulting configuration, create and PATCH alike. */
  configRules?: readonly ((cfg: AgentConfig) => void)[];
  /** Knowledge bases attached to agents are checked through this lookup; without one every id is unknown. */
  knowledgeBases?: KnowledgeBaseLookup;
  /** Refuses an output_schema the run could not enforce (lib/schema-checker.ts); checked on writes. */
  checkOutputSchema?: OutputSchemaCheck;
  /** llm_credentials_key is checked against the organization's secrets through this; without it, not checked. */
  secretExists?: SecretExists;
}

/**
 * The agents domain's one entry point for routes and other domains. The work is done by its parts: writes
 * (agent-writes.ts: create, PATCH, deploy, delete), reads (agent-reads.ts: lists, versions, the runtime's and the
 * tasks' ports), tool edits (agent-tool-edits.ts), over a shared store (agent-store.ts: load, present, persist).
 */
export class AgentsService {
  private readonly store: AgentStore;
  private readonly reads: AgentReads;
  private readonly writes: AgentWrites;
  private readonly toolEdits: AgentToolEdits;

  constructor(d: AgentsServiceDeps) {
    this.store = new AgentStore(d.repo, d.clock, d.urls, d.secretBox);
    const tools = new AgentToolsResolver(d.toolResolvers, d.knowledgeBases);
    this.reads = new AgentReads(this.store);
    this.writes = new AgentWrites(this.store, tools, d.configRules ?? [], d.checkOutputSchema, d.secretExists);
    this.toolEdits = new AgentToolEdits(this.store, tools);
  }

  // ---- writes

  create(principal: Principal, input: CreateAgentInput): Promise<AgentView> {
    return this.writes.create(principal, input);
  }

  /** PATCH: published at once with `deploy` or with staging off; otherwise to the draft (agent-writes.ts). */
  update(principal: Principal, id: string, patch: PatchAgentInput, opts: UpdateOptions): Promise<AgentView> {
    return this.writes.update(principal, id, patch, opts);
  }

  /** `PUT /v1/agents/{id}`: publishes the draft (or the current configuration again) as version + 1. */
  deploy(organizationId: string, id: string, viewer?: Principal): Promise<AgentView> {
    return this.writes.deploy(organizationId, id, viewer);
  }

  delete(organizationId: string, id: string, viewer?: Principal): Promise<{ id: string; deleted: true }> {
    return this.writes.delete(organizationId, id, viewer);
  }

  // ---- reads

  /** `viewer` sees only the agents `access_scope` lets it see; without one, every agent of the organization. */
  get(organizationId: string, id: string, viewer?: Principal): Promise<AgentView> {
    return this.store.get(organizationId, id, viewer);
  }

  list(viewer: Principal, page: number, perPage: number): Promise<Page<ReturnType<typeof presentAgentSummary>>> {
    return this.reads.list(viewer, page, perPage);
  }

  listFull(viewer: Principal, page: number, perPage: number): Promise<Page<AgentView>> {
    return this.reads.listFull(viewer, page, perPage);
  }

  listVersions(organizationId: string, id: string, page: number, perPage: number, viewer?: Principal) {
    return this.reads.listVersions(organizationId, id, page, perPage, viewer);
  }

  getVersion(organizationId: string, id: string, version: number, viewer?: Principal): Promise<AgentView> {
    return this.reads.getVersion(organizationId, id, version, viewer);
  }

  /** For the runtime: one version, secrets revealed (never present the result). */
  getRunnable(organizationId: string, id: string, version?: number | 'draft'): Promise<RunnableAgent> {
    return this.reads.getRunnable(organizationId, id, version);
  }

  /** For submissions: the version a task will run, secrets sealed, shared and frozen. */
  getSubmittable(organizationId: string, id: string, version?: number | 'draft'): Promise<SubmittableAgent> {
    return this.reads.getSubmittable(organizationId, id, version);
  }

  /** The webhook receiver's port: the published version as a submission needs it, with developer access. */
  find(organizationId: string, id: string): Promise<(SubmittableAgent & { developerAccess: boolean }) | undefined> {
    return this.reads.find(organizationId, id);
  }

  findCached(organizationId: string, id: string): (SubmittableAgent & { developerAccess: boolean }) | undefined {
    return this.reads.findCached(organizationId, id);
  }

  accessOf(organizationId: string, id: string): Promise<AgentAccess | undefined> {
    return this.store.repo.findAccess(organizationId, id);
  }

  exists(organizationId: string, id: string): Promise<boolean> {
    return this.store.repo.exists(organizationId, id);
  }

  /** Whether the caller may see the agent (a missing one: false), for routes of other domains keyed by an agent. */
  visibleTo(viewer: Principal, id: string): Promise<boolean> {
    return this.reads.visibleTo(viewer, id);
  }

  // ---- tools of one agent

  getTools(organizationId: string, id: string, viewer?: Principal): Promise<AgentToolsView> {
    return this.toolEdits.getTools(organizationId, id, viewer);
  }

  attachTool(organizationId: string, id: string, entry: ToolEntry, opts: { deploy: boolean }, viewer?: Principal): Promise<AgentToolsView> {
    return this.toolEdits.attachTool(organizationId, id, entry, opts, viewer);
  }

  detachTool(organizationId: string, id: string, toolId: string, opts: { deploy: boolean }, viewer?: Principal): Promise<AgentToolsView> {
    return this.toolEdits.detachTool(organizationId, id, toolId, opts, viewer);
  }
}
