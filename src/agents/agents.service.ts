import { ownerOf, type Principal } from '../auth/principal.js';
import { canSeeAgent, listOwner, type AgentAccess } from '../auth/agent-access.js';
import { isUniqueViolation } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { PublicUrls } from '../lib/urls.js';
import { resolveModel, type LLMModelProvider } from '../llm/model-catalog.js';
import { pageOf, type Page } from '../http/router.js';
import type { AgentConfig, CreateAgentInput, PatchAgentInput, ToolEntry } from './agent.schemas.js';
import { presentAgent, presentAgentSummary, presentVersionSummary, type AgentView } from './agent.presenter.js';
import { redactSecrets, revealSecrets, sealSecrets } from './agent-secrets.js';
import { AgentToolsResolver, mergeAttached, mergeGraph, removeTool, type KnowledgeBaseLookup } from './agent-tools.js';
import type { AgentRow, AgentsRepository } from './agents.repository.js';
import type { ToolResolverRegistry } from './tool-resolvers/index.js';
import { randomUniqueName } from './unique-name.js';
import { refuseUnsupportedSettings } from './unsupported-settings.js';
import { refuseOrchestrationEntry, refuseOrchestrationOnRegular } from './agent-type-rules.js';
import { checkExternalAgent, isExternalType } from '../external-agents/connectivity.js';

/** What the runtime runs (the tasks domain's RunnableAgent port): one version's full configuration, secrets revealed. */
export interface RunnableAgent {
  id: string;
  organization_id: string;
  status: string;
  version: number | 'draft';
  config: AgentView;
}

/** What a submission reads (the tasks domain's SubmittableAgent port): secrets sealed, configuration shared and frozen. */
export interface SubmittableAgent {
  id: string;
  organization_id: string;
  status: string;
  version: number | 'draft';
  config: Readonly<Record<string, unknown>>;
  /** Who may run it (access_scope): checked against the caller of an API or key-form webhook invocation. */
  access: AgentAccess;
}

export interface AgentToolsView {
  tools: unknown[];
  attached_tools: unknown[];
  graph: unknown[];
}

const DEFAULT_PROVIDER: LLMModelProvider = 'anthropic';
/** A created agent is returned with version 2 (spec 2.1, 9.3). */
const FIRST_VERSION = 2;

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
}

const duplicateName = () => AppError.invalid(['body', 'name'], 'an agent with this name already exists in the organization');

export class AgentsService {
  private readonly tools: AgentToolsResolver;

  /** getRunnable()'s revealed configurations of each shared row (see getRunnable). */
  private readonly runnables = new WeakMap<AgentRow, { current?: RunnableAgent; draft?: RunnableAgent }>();
  /** find()'s snapshot of each shared row (see find). */
  private readonly snapshots = new WeakMap<AgentRow, SubmittableAgent & { developerAccess: boolean }>();

  private readonly repo: AgentsRepository;
  private readonly clock: Clock;
  private readonly urls: PublicUrls;
  private readonly secretBox: SecretBox;
  /** Rules of other domains on the resulting configuration (OIDC pre-auth: src/auth/pre-auth.service.ts), create and PATCH alike. */
  private readonly configRules: readonly ((cfg: AgentConfig) => void)[];

  constructor(d: AgentsServiceDeps) {
    this.repo = d.repo;
    this.clock = d.clock;
    this.urls = d.urls;
    this.secretBox = d.secretBox;
    this.configRules = d.configRules ?? [];
    this.tools = new AgentToolsResolver(d.toolResolvers, d.knowledgeBases);
  }

  async create(principal: Principal, input: CreateAgentInput): Promise<AgentView> {
    const org = principal.organizationId;
    if (await this.repo.nameTaken(org, input.name)) throw duplicateName();
    const provider = input.model_provider ?? DEFAULT_PROVIDER;
    const config: AgentConfig = {
      ...input,
      model_provider: provider,
      model_name: resolveModel(provider, input.model_name),
      created_by: input.created_by ?? principal.subject,
    };
    checkConsistency(config);
    refuseOrchestrationOnRegular({ tools: input.tools, graph: input.graph }, config);
    for (const rule of this.configRules) rule(config);
    await this.checkSubAgents(org, ownerOf(principal), input.tools, ['body', 'tools']);
    checkExternalAgent(config);
    const resolved = await this.tools.resolve(
      org,
      { tools: input.tools, explicitAttached: input.attached_tools, baseAttached: [], graph: input.graph, validateGraph: true, knowledgeBases: input.knowledge_bases },
      ['body'],
    );
    const stored = sealSecrets({ ...config, ...resolved }, this.secretBox);
    const now = this.clock.now();
    const id = newId();
    for (let attempt = 0; ; attempt++) {
      const uniqueName = await this.pickUniqueName(org);
      try {
        // The owner is the authenticated caller, never the caller-writable `created_by`.
        const access = { owner: ownerOf(principal), personal: stored.access_scope !== 'organizational' };
        await this.repo.insert({ id, organizationId: org, name: stored.name, uniqueName, status: 'ACTIVE', currentVersion: FIRST_VERSION, config: stored, createdBy: stored.created_by, access, createdAt: now });
        break;
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        if (!/unique_name/.test(String((e as Error).message)) || attempt >= 5) throw duplicateName();
      }
    }
    return this.get(org, id);
  }

  /**
   * `viewer` (the API's caller) sees only the agents `access_scope` lets it see (src/auth/agent-access.ts); another's
   * personal agent is answered as missing. Without one (the service's own reads) every agent of the organization.
   */
  async get(organizationId: string, id: string, viewer?: Principal): Promise<AgentView> {
    return this.view(await this.load(organizationId, id, viewer));
  }

  async list(viewer: Principal, page: number, perPage: number): Promise<Page<ReturnType<typeof presentAgentSummary>>> {
    const { rows, total } = await this.repo.list(viewer.organizationId, (page - 1) * perPage, perPage, listOwner(viewer));
    return pageOf(rows.map((r) => presentAgentSummary(r, r.draft ?? r.config, r.draft !== null)), total, page, perPage);
  }

  async listFull(viewer: Principal, page: number, perPage: number): Promise<Page<AgentView>> {
    const { rows, total } = await this.repo.list(viewer.organizationId, (page - 1) * perPage, perPage, listOwner(viewer));
    return pageOf(rows.map((r) => this.view(r)), total, page, perPage);
  }

  /**
   * PATCH: with `deploy` or with staging off (`should_stage_before_publish` of the resulting configuration) the change
   * is published at once as a new version; otherwise it goes to the draft. `status` applies at once either way.
   */
  async update(principal: Principal, id: string, patch: PatchAgentInput, opts: { deploy: boolean }): Promise<AgentView> {
    const org = principal.organizationId;
    const row = await this.load(org, id, principal);
    const { status, ...fields } = patch;
    if (Object.keys(fields).length === 0 && !opts.deploy) {
      if (status && status !== row.status) await this.repo.setStatus(org, id, status, this.clock.now());
      return this.get(org, id);
    }
    const base = row.draft ?? row.config;
    if (fields.name !== undefined && fields.name !== base.name && (await this.repo.nameTaken(org, fields.name, id))) throw duplicateName();
    const merged = applyPatch(base, fields);
    if ('model_provider' in fields || 'model_name' in fields) {
      const provider = merged.model_provider ?? DEFAULT_PROVIDER;
      const providerChanged = provider !== base.model_provider;
      const requested = 'model_name' in fields ? fields.model_name : providerChanged ? null : base.model_name;
      merged.model_provider = provider;
      merged.model_name = resolveModel(provider, requested);
    }
    checkConsistency(merged);
    refuseOrchestrationOnRegular({ tools: fields.tools, graph: fields.graph }, merged);
    for (const rule of this.configRules) rule(merged);
    await this.checkSubAgents(org, row.access.owner, fields.tools, ['body', 'tools']);
    // Stored secrets of the unchanged part are sealed: the external-agent checks read them revealed.
    if (isExternalType(merged.type)) checkExternalAgent(revealSecrets(merged as unknown as Record<string, unknown>, this.secretBox));
    if (fields.tools || fields.attached_tools || fields.graph || fields.knowledge_bases) {
      const resolved = await this.tools.resolve(
        org,
        {
          tools: fields.tools ?? [],
          explicitAttached: fields.attached_tools,
          baseAttached: merged.attached_tools,
          graph: merged.graph,
          validateGraph: fields.graph !== undefined,
          knowledgeBases: fields.knowledge_bases ?? [],
        },
        ['body'],
        id,
      );
      merged.attached_tools = resolved.attached_tools;
      merged.graph = resolved.graph;
    }
    const stored = sealSecrets(merged, this.secretBox, base as unknown as Record<string, unknown>);
    await this.persist(row, stored, opts.deploy || !stored.should_stage_before_publish, status);
    return this.get(org, id);
  }

  /** `PUT /v1/agents/{id}`: publishes the draft (or the current configuration again) as version + 1. */
  async deploy(organizationId: string, id: string, viewer?: Principal): Promise<AgentView> {
    const row = await this.load(organizationId, id, viewer);
    await this.persist(row, row.draft ?? row.config, true);
    return this.get(organizationId, id);
  }

  async delete(organizationId: string, id: string, viewer?: Principal): Promise<{ id: string; deleted: true }> {
    const row = await this.load(organizationId, id, viewer);
    if (row.config.deletable === false || row.draft?.deletable === false) throw new AppError('conflict', 'Agent is not deletable');
    if (!(await this.repo.softDelete(organizationId, id, this.clock.now()))) throw AppError.notFound('Agent');
    return { id, deleted: true };
  }

  async listVersions(organizationId: string, id: string, page: number, perPage: number, viewer?: Principal) {
    const row = await this.load(organizationId, id, viewer);
    const { rows, total } = await this.repo.listVersions(organizationId, id, (page - 1) * perPage, perPage);
    return pageOf(rows.map((v) => presentVersionSummary(row, v)), total, page, perPage);
  }

  async getVersion(organizationId: string, id: string, version: number, viewer?: Principal): Promise<AgentView> {
    const row = await this.load(organizationId, id, viewer);
    const v = await this.repo.findVersion(organizationId, id, version);
    if (!v) throw AppError.notFound('Agent version');
    return presentAgent(row, v.config, { version: v.version, hasPendingChanges: false, isLatest: v.version === row.currentVersion }, this.urls.webhook);
  }

  /**
   * For the runtime: the published current version by default, a published version by number, or the draft
   * ('draft'; the published version when there is no draft). Secrets are revealed: never present the result.
   */
  async getRunnable(organizationId: string, id: string, version?: number | 'draft'): Promise<RunnableAgent> {
    // The shared parse is safe here: revealing copies every object of the configuration.
    const row = await this.repo.findShared(organizationId, id);
    if (!row) throw AppError.notFound('Agent');
    // The versions the row itself holds (the current one, the draft) are kept with it, revealed once: decrypting
    // and presenting was ~0.25 ms of every run. They live as long as the repository keeps the row (until the agent
    // or any configuration changes on libsql; one call on PostgreSQL), frozen, so no run can alter another's.
    const fromRow = version === undefined || version === 'draft' || version === row.currentVersion;
    const key = version === 'draft' && row.draft ? 'draft' : 'current';
    const kept = fromRow ? this.runnables.get(row)?.[key] : undefined;
    if (kept) return kept;
    const { config, version: v } = await this.pickVersion(row, version);
    const revealed = revealSecrets(config as unknown as Record<string, unknown>, this.secretBox) as unknown as AgentConfig;
    const view = presentAgent(row, revealed, { version: typeof v === 'number' ? v : row.currentVersion, hasPendingChanges: row.draft !== null, isLatest: v === row.currentVersion }, this.urls.webhook, true);
    view.version = v;
    const runnable: RunnableAgent = deepFreeze({ id: row.id, organization_id: row.organizationId, status: row.status, version: v, config: view });
    if (fromRow) this.runnables.set(row, { ...this.runnables.get(row), [key]: runnable });
    return runnable;
  }

  /**
   * For submissions: the version a task will run, secrets still sealed, nothing presented; the configuration is
   * shared and frozen (see AgentsRepository.findShared). The worker reads the agent again with getRunnable.
   */
  async getSubmittable(organizationId: string, id: string, version?: number | 'draft'): Promise<SubmittableAgent> {
    const row = await this.repo.findShared(organizationId, id);
    if (!row) throw AppError.notFound('Agent');
    return this.submittable(row, version);
  }

  accessOf(organizationId: string, id: string): Promise<AgentAccess | undefined> {
    return this.repo.findAccess(organizationId, id);
  }

  exists(organizationId: string, id: string): Promise<boolean> {
    return this.repo.exists(organizationId, id);
  }

  /**
   * The webhook receiver's port: status and developer access of the published version, and the agent as a
   * submission needs it (the receiver hands it on, so a webhook call reads its agent once).
   */
  async find(organizationId: string, id: string): Promise<(SubmittableAgent & { developerAccess: boolean }) | undefined> {
    const row = await this.repo.findShared(organizationId, id);
    if (!row) return undefined;
    // The shared row is the same object while the repository's cache holds it: so is its snapshot (a busy webhook
    // asks for it on every call).
    let found = this.snapshots.get(row);
    if (!found) {
      found = Object.freeze({ ...(await this.submittable(row)), developerAccess: row.config.developer_access !== false });
      this.snapshots.set(row, found);
    }
    return found;
  }

  private async submittable(row: AgentRow, version?: number | 'draft'): Promise<SubmittableAgent> {
    const { config, version: v } = await this.pickVersion(row, version);
    return { id: row.id, organization_id: row.organizationId, status: row.status, version: v, config: config as unknown as Record<string, unknown>, access: row.access };
  }

  /** The published current version by default, a published version by number, or the draft (else the published). */
  private async pickVersion(row: AgentRow, version?: number | 'draft'): Promise<{ config: AgentConfig; version: number | 'draft' }> {
    if (version === 'draft' && row.draft) return { config: row.draft, version: 'draft' };
    if (typeof version === 'number' && version !== row.currentVersion) {
      const found = await this.repo.findVersion(row.organizationId, row.id, version);
      if (!found) throw AppError.notFound('Agent version');
      return { config: found.config, version: found.version };
    }
    return { config: row.config, version: row.currentVersion };
  }

  // ---- tools of one agent (the working copy: the draft when there is one)

  async getTools(organizationId: string, id: string, viewer?: Principal): Promise<AgentToolsView> {
    return toolsView(await this.load(organizationId, id, viewer));
  }

  async attachTool(organizationId: string, id: string, entry: ToolEntry, opts: { deploy: boolean }, viewer?: Principal): Promise<AgentToolsView> {
    const row = await this.load(organizationId, id, viewer);
    refuseOrchestrationEntry((row.draft ?? row.config).type, entry);
    await this.checkSubAgents(organizationId, row.access.owner, [entry], ['body'], false);
    const resolved = await this.tools.resolveEntry(organizationId, entry, ['body'], id);
    const base = row.draft ?? row.config;
    const next: AgentConfig = {
      ...base,
      tools: [...base.tools, entry],
      attached_tools: resolved.attached ? mergeAttached(base.attached_tools, resolved.attached) : base.attached_tools,
      graph: mergeGraph(base.graph, resolved.graph, true).map((g) => ({ ...g, id: g.id ?? newId() })),
    };
    await this.persist(row, sealSecrets(next, this.secretBox, base as unknown as Record<string, unknown>), opts.deploy);
    return this.getTools(organizationId, id);
  }

  async detachTool(organizationId: string, id: string, toolId: string, opts: { deploy: boolean }, viewer?: Principal): Promise<AgentToolsView> {
    const row = await this.load(organizationId, id, viewer);
    const base = row.draft ?? row.config;
    const { set, removed } = removeTool({ tools: base.tools, attached_tools: base.attached_tools, graph: base.graph, skills: base.skills }, toolId);
    if (!removed) throw AppError.notFound('Tool');
    await this.persist(row, { ...base, ...set } as AgentConfig, opts.deploy);
    return this.getTools(organizationId, id);
  }

  // ---- internals

  /**
   * A sub-agent runs for the calling agent's owner (src/tasks/submission-access.ts): another owner's personal agent is
   * refused here as the resolver refuses a missing one, so neither its existence nor its name shows, and no agent is
   * saved that could never call it.
   */
  private async checkSubAgents(org: string, owner: string | null, tools: ToolEntry[] | undefined, loc: (string | number)[], indexed = true): Promise<void> {
    for (const [i, entry] of (tools ?? []).entries()) {
      if (entry.type !== 'agent') continue;
      const access = await this.repo.findAccess(org, entry.agent_id);
      if (access?.personal && access.owner !== null && access.owner !== owner) {
        throw AppError.invalid([...loc, ...(indexed ? [i] : []), 'agent_id'], `agent '${entry.agent_id}' not found`);
      }
    }
  }

  private async load(organizationId: string, id: string, viewer?: Principal): Promise<AgentRow> {
    const row = await this.repo.find(organizationId, id);
    if (!row || (viewer && !canSeeAgent(viewer, row.access))) throw AppError.notFound('Agent');
    return row;
  }

  /** Whether the caller may see the agent (a missing one: false), for routes of other domains keyed by an agent. */
  async visibleTo(viewer: Principal, id: string): Promise<boolean> {
    const row = await this.repo.findShared(viewer.organizationId, id);
    return !!row && canSeeAgent(viewer, row.access);
  }

  private view(row: AgentRow): AgentView {
    const draft = row.draft !== null;
    return presentAgent(row, row.draft ?? row.config, { version: row.currentVersion, hasPendingChanges: draft, isLatest: !draft }, this.urls.webhook);
  }

  private async persist(row: AgentRow, config: AgentConfig, publish: boolean, status?: string): Promise<void> {
    const now = this.clock.now();
    const st = status && status !== row.status ? status : undefined;
    try {
      if (!publish) return await this.repo.saveDraft(row.organizationId, row.id, config, now, st);
      if (!(await this.repo.publish(row.organizationId, row.id, row.currentVersion, config, now, st))) {
        throw new AppError('conflict', 'Agent was changed by another request; retry');
      }
    } catch (e) {
      if (isUniqueViolation(e)) throw duplicateName();
      throw e;
    }
  }

  private async pickUniqueName(organizationId: string): Promise<string> {
    for (let attempt = 0; attempt < 60; attempt++) {
      const name = randomUniqueName(attempt);
      if (!(await this.repo.uniqueNameTaken(organizationId, name))) return name;
    }
    return randomUniqueName(60);
  }
}

function toolsView(row: AgentRow): AgentToolsView {
  const cfg = redactSecrets((row.draft ?? row.config) as unknown as Record<string, unknown>) as unknown as AgentConfig;
  return { tools: cfg.tools, attached_tools: cfg.attached_tools, graph: cfg.graph };
}

/** `agno_settings` (and its `tool_calls_compression`) and `instructions` merge key by key; other fields replace. */
function applyPatch(base: AgentConfig, fields: Omit<PatchAgentInput, 'status'>): AgentConfig {
  const out = { ...base } as Record<string, unknown>;
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (k === 'agno_settings') {
      const p = v as Record<string, unknown>;
      const tcc = p.tool_calls_compression ? { ...base.agno_settings.tool_calls_compression, ...(p.tool_calls_compression as object) } : base.agno_settings.tool_calls_compression;
      out[k] = { ...base.agno_settings, ...p, tool_calls_compression: tcc };
    } else if (k === 'instructions') out[k] = { ...base.instructions, ...(v as object) };
    else out[k] = v;
  }
  return out as AgentConfig;
}

/** Rules across fields, checked on the resulting configuration (create and PATCH alike). */
function checkConsistency(cfg: AgentConfig): void {
  if (cfg.use_oidc_pre_auth_token_for_llm && !cfg.use_oidc_pre_auth) {
    throw AppError.invalid(['body', 'use_oidc_pre_auth_token_for_llm'], 'use_oidc_pre_auth_token_for_llm requires use_oidc_pre_auth');
  }
  // Enforcing a plan without planning would be a contradiction to guess about (docs/planning-and-chaining.md).
  if (cfg.enforce_deep_planning === true && cfg.deep_planning !== true) {
    throw AppError.invalid(['body', 'enforce_deep_planning'], 'enforce_deep_planning requires deep_planning');
  }
  refuseUnsupportedSettings(cfg);
}

/** Freezes an object graph (a revealed configuration shared by concurrent runs). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
