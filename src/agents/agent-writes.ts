import { ownerOf, type Principal } from '../auth/principal.js';
import { isUniqueViolation } from '../db/database.js';
import { AppError } from '../errors.js';
import { newId } from '../lib/ids.js';
import { chooseModel, DEFAULT_MODEL_PROVIDER } from '../llm/model-catalog.js';
import { checkExternalAgent, isExternalType } from '../external-agents/connectivity.js';
import { ORCHESTRATION_NODES_MSG, type AgentConfig, type CreateAgentInput, type PatchAgentInput } from './agent.schemas.js';
import type { AgentView } from './agent.presenter.js';
import { revealSecrets, sealSecrets } from './agent-secrets.js';
import { duplicateName, type AgentStore } from './agent-store.js';
import type { AgentToolsResolver } from './agent-tools.js';
import { refuseOrchestrationOnRegular } from './agent-type-rules.js';
import { refuseLoopSettingsOnOrchestration } from './orchestration-agent-rules.js';
import { randomUniqueName } from './unique-name.js';
import { refuseUnsupportedSettings } from './unsupported-settings.js';
import type { OutputSchemaCheck } from '../lib/schema-checker.js';

/** Whether the organization has a secret of that name (PUT /v1/secrets/{name}); provided by the secrets domain. */
export type SecretExists = (organizationId: string, name: string) => Promise<boolean>;

/** PATCH options: `fromWorkflows` is the workflows module pointing its agent at a version (the one writer of orchestration_nodes). */
export interface UpdateOptions {
  deploy: boolean;
  fromWorkflows?: boolean;
}

/** A created agent is returned with version 2 (spec 2.1, 9.3). */
const FIRST_VERSION = 2;

/** Creating, changing, publishing and deleting agents: every change is checked on the resulting configuration. */
export class AgentWrites {
  constructor(
    private readonly store: AgentStore,
    private readonly tools: AgentToolsResolver,
    /** Rules of other domains on the resulting configuration (OIDC pre-auth: src/auth/pre-auth.service.ts), create and PATCH alike. */
    private readonly configRules: readonly ((cfg: AgentConfig) => void)[],
    /** An output_schema the run could not enforce is refused (422), not stored to be ignored. */
    private readonly checkOutputSchema?: OutputSchemaCheck,
    /** llm_credentials_key must name an existing secret; without the lookup it is not checked. */
    private readonly secretExists?: SecretExists,
  ) {}

  async create(principal: Principal, input: CreateAgentInput): Promise<AgentView> {
    const org = principal.organizationId;
    if (await this.store.repo.nameTaken(org, input.name)) throw duplicateName();
    const model = chooseModel(input.model_provider, input.model_name);
    const config: AgentConfig = {
      ...input,
      model_provider: model.provider,
      model_name: model.modelName,
      created_by: input.created_by ?? principal.subject,
    };
    checkConsistency(config);
    refuseOrchestrationOnRegular({ tools: input.tools, graph: input.graph }, config);
    for (const rule of this.configRules) rule(config);
    refuseLoopSettingsOnOrchestration(config);
    if (config.output_schema) await this.checkOutputSchema?.(org, config.output_schema, ['body', 'output_schema']);
    await this.checkCredentialsKey(org, config.llm_credentials_key);
    await this.store.checkSubAgents(org, ownerOf(principal), input.tools, ['body', 'tools']);
    checkExternalAgent(config);
    const resolved = await this.tools.resolve(
      org,
      { tools: input.tools, explicitAttached: input.attached_tools, baseAttached: [], graph: input.graph, validateGraph: true, knowledgeBases: input.knowledge_bases, skills: input.skills },
      ['body'],
    );
    const stored = sealSecrets({ ...config, ...resolved }, this.store.secretBox);
    const now = this.store.clock.now();
    const id = newId();
    for (let attempt = 0; ; attempt++) {
      const uniqueName = await this.pickUniqueName(org);
      try {
        // The owner is the authenticated caller, never the caller-writable `created_by`.
        const access = { owner: ownerOf(principal), personal: stored.access_scope !== 'organizational' };
        await this.store.repo.insert({ id, organizationId: org, name: stored.name, uniqueName, status: 'ACTIVE', currentVersion: FIRST_VERSION, config: stored, createdBy: stored.created_by, access, createdAt: now });
        break;
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        if (!/unique_name/.test(String((e as Error).message)) || attempt >= 5) throw duplicateName();
      }
    }
    return this.store.get(org, id);
  }

  /**
   * PATCH: with `deploy` or with staging off (`should_stage_before_publish` of the resulting configuration) the change
   * is published at once as a new version; otherwise it goes to the draft. `status` applies at once either way.
   */
  async update(principal: Principal, id: string, patch: PatchAgentInput, opts: UpdateOptions): Promise<AgentView> {
    const org = principal.organizationId;
    const row = await this.store.load(org, id, principal);
    const { status, ...fields } = patch;
    if (Object.keys(fields).length === 0 && !opts.deploy) {
      if (status && status !== row.status) await this.store.repo.setStatus(org, id, status, this.store.clock.now());
      return this.store.get(org, id);
    }
    const base = row.draft ?? row.config;
    // Sending the stored value back (a configuration read and written again) changes nothing and is accepted.
    if (fields.orchestration_nodes !== undefined && !opts.fromWorkflows && JSON.stringify(fields.orchestration_nodes) !== JSON.stringify(base.orchestration_nodes ?? [])) {
      throw AppError.invalid(['body', 'orchestration_nodes'], ORCHESTRATION_NODES_MSG);
    }
    if (fields.name !== undefined && fields.name !== base.name && (await this.store.repo.nameTaken(org, fields.name, id))) throw duplicateName();
    const merged = applyPatch(base, fields);
    if ('model_provider' in fields || 'model_name' in fields) {
      const provider = merged.model_provider ?? DEFAULT_MODEL_PROVIDER;
      const providerChanged = provider !== base.model_provider;
      const requested = 'model_name' in fields ? fields.model_name : providerChanged ? null : base.model_name;
      merged.model_provider = provider;
      merged.model_name = chooseModel(provider, requested).modelName;
    }
    checkConsistency(merged);
    refuseOrchestrationOnRegular({ tools: fields.tools, graph: fields.graph }, merged);
    for (const rule of this.configRules) rule(merged);
    refuseLoopSettingsOnOrchestration(merged, base, fields);
    if (fields.output_schema) await this.checkOutputSchema?.(org, fields.output_schema, ['body', 'output_schema']);
    if (fields.llm_credentials_key !== undefined && fields.llm_credentials_key !== base.llm_credentials_key) await this.checkCredentialsKey(org, fields.llm_credentials_key);
    await this.store.checkSubAgents(org, row.access.owner, fields.tools, ['body', 'tools']);
    // Stored secrets of the unchanged part are sealed: the external-agent checks read them revealed.
    if (isExternalType(merged.type)) checkExternalAgent(revealSecrets(merged as unknown as Record<string, unknown>, this.store.secretBox));
    if (fields.tools || fields.attached_tools || fields.graph || fields.knowledge_bases || fields.skills) {
      const resolved = await this.tools.resolve(
        org,
        {
          tools: fields.tools ?? [],
          explicitAttached: fields.attached_tools,
          baseAttached: merged.attached_tools,
          graph: merged.graph,
          validateGraph: fields.graph !== undefined,
          knowledgeBases: fields.knowledge_bases ?? [],
          skills: fields.skills ?? [],
        },
        ['body'],
        id,
      );
      merged.attached_tools = resolved.attached_tools;
      merged.graph = resolved.graph;
    }
    const stored = sealSecrets(merged, this.store.secretBox, base as unknown as Record<string, unknown>);
    await this.store.persist(row, stored, opts.deploy || !stored.should_stage_before_publish, status);
    return this.store.get(org, id);
  }

  /** `PUT /v1/agents/{id}`: publishes the draft (or the current configuration again) as version + 1. */
  async deploy(organizationId: string, id: string, viewer?: Principal): Promise<AgentView> {
    const row = await this.store.load(organizationId, id, viewer);
    await this.store.persist(row, row.draft ?? row.config, true);
    return this.store.get(organizationId, id);
  }

  async delete(organizationId: string, id: string, viewer?: Principal): Promise<{ id: string; deleted: true }> {
    const row = await this.store.load(organizationId, id, viewer);
    if (row.config.deletable === false || row.draft?.deletable === false) throw new AppError('conflict', 'Agent is not deletable');
    if (!(await this.store.repo.softDelete(organizationId, id, this.store.clock.now()))) throw AppError.notFound('Agent');
    return { id, deleted: true };
  }

  /**
   * An llm_credentials_key naming no secret would be stored and then, at run time, not find its key: refused here
   * (docs/contract.md#llm-credentials). A secret deleted later is the run's concern.
   */
  private async checkCredentialsKey(organizationId: string, name: string | null | undefined): Promise<void> {
    const key = name?.trim();
    if (!key || !this.secretExists) return;
    if (!(await this.secretExists(organizationId, key))) {
      throw AppError.invalid(['body', 'llm_credentials_key'], `no organization secret named '${key}': create it first with PUT /v1/secrets/${key}`);
    }
  }

  private async pickUniqueName(organizationId: string): Promise<string> {
    for (let attempt = 0; attempt < 60; attempt++) {
      const name = randomUniqueName(attempt);
      if (!(await this.store.repo.uniqueNameTaken(organizationId, name))) return name;
    }
    return randomUniqueName(60);
  }
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
  // The agent's own llm_credentials win over a named secret: both at once would leave one silently unused.
  if (cfg.llm_credentials && cfg.llm_credentials_key) {
    throw AppError.invalid(['body', 'llm_credentials_key'], 'give llm_credentials or llm_credentials_key, not both (llm_credentials would be used and the named secret ignored)');
  }
  refuseUnsupportedSettings(cfg);
}
