import type { Principal } from '../auth/principal.js';
import { isUniqueViolation } from '../db/database.js';
import { AppError } from '../errors.js';
import { pageOf, type Page } from '../http/router.js';
import { isoTime, type Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { checkWorkflowGraph, startOf } from './workflow-graph.js';
import type { CreateWorkflowBody, PatchWorkflowInput, WorkflowDefinition, WorkflowStep } from './workflow.schemas.js';
import type { WorkflowRow, WorkflowsRepository } from './workflows.repository.js';
import type { z } from 'zod';

/** What the workflows domain needs from others: the resources steps name, and the orchestration agent it keeps. */
export interface WorkflowPorts {
  /** The agent exists and the caller may run it (another member's personal agent is answered as missing). */
  agentVisible(viewer: Principal, agentId: string): Promise<boolean>;
  findConnection(orgId: string, connectionId: string): Promise<{ id: string; connectorId: string } | undefined>;
  findOperation(orgId: string, connectorId: string, idOrOperationId: string): Promise<{ id: string } | undefined>;
  functionExists(orgId: string, functionId: string): Promise<boolean>;
  /** The `orchestration` agent of a workflow: created (returns its id), pointed at a version, deleted. */
  orchestration: {
    create(principal: Principal, w: OrchestrationTarget): Promise<string>;
    pin(principal: Principal, agentId: string, w: OrchestrationTarget): Promise<boolean>;
    delete(orgId: string, agentId: string): Promise<void>;
  };
}

export interface OrchestrationTarget {
  workflowId: string;
  version: number;
  name: string;
  description: string;
}

export type WorkflowView = ReturnType<typeof present>;

/** A created workflow is version 1. */
const FIRST_VERSION = 1;
const duplicateName = () => AppError.invalid(['body', 'name'], 'a workflow with this name already exists in the organization');

/**
 * Workflows (docs/workflows.md): org-scoped definitions, versioned like agents (a draft, deploy publishes it as
 * version + 1, published versions never change). Each workflow keeps one `orchestration` agent pointed at its current
 * version, so a run is a task of that agent: invoke, webhooks, stop, trace and waiting all work unchanged.
 */
export class WorkflowsService {
  constructor(
    private readonly repo: WorkflowsRepository,
    private readonly ports: WorkflowPorts,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal, input: z.output<typeof CreateWorkflowBody>): Promise<WorkflowView> {
    const org = principal.organizationId;
    const def = await this.checked(principal, input);
    if (await this.repo.nameTaken(org, def.name)) throw duplicateName();
    const id = newId();
    // The agent first: its name rule (unique among agents) is the last check that can refuse the request.
    const agentId = await this.ports.orchestration.create(principal, { workflowId: id, version: FIRST_VERSION, name: def.name, description: def.description });
    try {
      await this.repo.insert({ id, organizationId: org, version: FIRST_VERSION, definition: def, agentId, createdBy: principal.subject, now: this.clock.now() });
    } catch (e) {
      // Nothing half-created: the agent goes with the failed insert.
      await this.ports.orchestration.delete(org, agentId).catch(() => undefined);
      if (isUniqueViolation(e)) throw duplicateName();
      throw e;
    }
    return this.get(org, id);
  }

  async get(orgId: string, id: string): Promise<WorkflowView> {
    return present(await this.load(orgId, id));
  }

  async list(orgId: string, page: number, perPage: number): Promise<Page<WorkflowView>> {
    const { rows, total } = await this.repo.list(orgId, (page - 1) * perPage, perPage);
    return pageOf(rows.map((r) => present(r)), total, page, perPage);
  }

  /** PATCH: staged as the draft, or published at once with `deploy`. */
  async update(principal: Principal, id: string, patch: PatchWorkflowInput, opts: { deploy: boolean }): Promise<WorkflowView> {
    const org = principal.organizationId;
    const row = await this.load(org, id);
    const merged = { ...(row.draft ?? row.definition) } as Record<string, unknown>;
    for (const [k, v] of Object.entries(patch)) if (v !== undefined) merged[k] = v;
    const def = await this.checked(principal, merged as WorkflowDefinition);
    if (await this.repo.nameTaken(org, def.name, id)) throw duplicateName();
    if (opts.deploy) await this.publish(principal, row, def);
    else await this.saveDraft(row, def);
    return this.get(org, id);
  }

  /** `PUT /v1/workflows/{id}`: publishes the draft (or the current definition again) as version + 1. */
  async deploy(principal: Principal, id: string): Promise<WorkflowView> {
    const row = await this.load(principal.organizationId, id);
    // Checked again: a step may name an agent or connection deleted since the draft was saved.
    const def = await this.checked(principal, row.draft ?? row.definition);
    await this.publish(principal, row, def);
    return this.get(principal.organizationId, id);
  }

  /**
   * `POST /v1/workflows/{id}/agent`: the workflow's orchestration agent, pointed at the current version; created
   * again when it was deleted. Returns the agent's id.
   */
  async ensureAgent(principal: Principal, id: string): Promise<{ workflow_id: string; agent_id: string; version: number }> {
    const org = principal.organizationId;
    const row = await this.load(org, id);
    const target = { workflowId: id, version: row.currentVersion, name: row.definition.name, description: row.definition.description };
    let agentId = row.agentId;
    if (!agentId || !(await this.ports.orchestration.pin(principal, agentId, target))) {
      agentId = await this.ports.orchestration.create(principal, target);
      await this.repo.setAgent(org, id, agentId, this.clock.now());
    }
    return { workflow_id: id, agent_id: agentId, version: row.currentVersion };
  }

  async delete(orgId: string, id: string): Promise<{ id: string; deleted: true }> {
    const row = await this.load(orgId, id);
    if (!(await this.repo.softDelete(orgId, id, this.clock.now()))) throw AppError.notFound('Workflow');
    if (row.agentId) await this.ports.orchestration.delete(orgId, row.agentId).catch(() => undefined);
    return { id, deleted: true };
  }

  async listVersions(orgId: string, id: string, page: number, perPage: number) {
    const row = await this.load(orgId, id);
    const { rows, total } = await this.repo.listVersions(orgId, id, (page - 1) * perPage, perPage);
    const items = rows.map((v) => ({ version: v.version, name: v.definition.name, is_latest: v.version === row.currentVersion, created_at: isoTime(v.createdAt) }));
    return pageOf(items, total, page, perPage);
  }

  async getVersion(orgId: string, id: string, version: number): Promise<WorkflowView> {
    const row = await this.load(orgId, id);
    const v = await this.repo.findVersion(orgId, id, version);
    if (!v) throw AppError.notFound('Workflow version');
    return present(row, { definition: v.definition, version: v.version, pending: false });
  }

  /** For the runner: one published version's definition (the current one when `version` is absent). */
  async runnable(orgId: string, id: string, version?: number): Promise<{ version: number; definition: WorkflowDefinition }> {
    const row = await this.repo.find(orgId, id);
    if (!row) throw AppError.notFound('Workflow');
    if (version === undefined || version === row.currentVersion) return { version: row.currentVersion, definition: row.definition };
    const v = await this.repo.findVersion(orgId, id, version);
    if (!v) throw AppError.notFound('Workflow version');
    return { version: v.version, definition: v.definition };
  }

  /** For the `workflow` tool kind: the workflow's name, description and agent; undefined when it does not exist. */
  async describe(orgId: string, id: string): Promise<{ name: string; description: string; agentId: string | null } | undefined> {
    const row = await this.repo.find(orgId, id);
    return row && { name: row.definition.name, description: row.definition.description, agentId: row.agentId };
  }

  private async load(orgId: string, id: string): Promise<WorkflowRow> {
    const row = await this.repo.find(orgId, id);
    if (!row) throw AppError.notFound('Workflow');
    return row;
  }

  private async saveDraft(row: WorkflowRow, def: WorkflowDefinition): Promise<void> {
    try {
      await this.repo.saveDraft(row.organizationId, row.id, def, this.clock.now());
    } catch (e) {
      if (isUniqueViolation(e)) throw duplicateName();
      throw e;
    }
  }

  private async publish(principal: Principal, row: WorkflowRow, def: WorkflowDefinition): Promise<void> {
    try {
      if (!(await this.repo.publish(row.organizationId, row.id, row.currentVersion, def, this.clock.now()))) {
        throw new AppError('conflict', 'Workflow was changed by another request; retry');
      }
    } catch (e) {
      if (isUniqueViolation(e)) throw duplicateName();
      throw e;
    }
    // The agent follows the new version, so its next task runs it (its own earlier versions keep the older one).
    await this.ensureAgent(principal, row.id);
  }

  /** The graph rules, then every resource a step names, in the organization; connector operations by catalog id. */
  private async checked(principal: Principal, def: WorkflowDefinition): Promise<WorkflowDefinition> {
    checkWorkflowGraph(def);
    const steps: WorkflowStep[] = [];
    for (const [i, s] of def.steps.entries()) steps.push(await this.checkStep(principal, s, ['body', 'steps', i]));
    return { ...def, start: startOf(def), steps };
  }

  private async checkStep(principal: Principal, s: WorkflowStep, loc: (string | number)[]): Promise<WorkflowStep> {
    const org = principal.organizationId;
    switch (s.type) {
      case 'agent':
        if (!(await this.ports.agentVisible(principal, s.agent_id))) throw AppError.invalid([...loc, 'agent_id'], `agent '${s.agent_id}' not found`);
        return s;
      case 'custom_function':
        if (!(await this.ports.functionExists(org, s.custom_function_id))) throw AppError.invalid([...loc, 'custom_function_id'], `custom function '${s.custom_function_id}' not found`);
        return s;
      case 'action': {
        const conn = await this.ports.findConnection(org, s.connection_id);
        if (!conn) throw AppError.invalid([...loc, 'connection_id'], `connection '${s.connection_id}' not found`);
        const op = await this.ports.findOperation(org, conn.connectorId, s.operation_id);
        if (!op) throw AppError.invalid([...loc, 'operation_id'], `operation '${s.operation_id}' not found in connection '${s.connection_id}'`);
        return { ...s, operation_id: op.id };
      }
      default:
        return s;
    }
  }
}

function present(row: WorkflowRow, shown?: { definition: WorkflowDefinition; version: number; pending: boolean }) {
  const s = shown ?? { definition: row.draft ?? row.definition, version: row.currentVersion, pending: row.draft !== null };
  const d = s.definition;
  return {
    id: row.id,
    organization_id: row.organizationId,
    name: d.name,
    description: d.description,
    version: s.version,
    has_pending_changes: s.pending,
    is_latest: !s.pending && s.version === row.currentVersion,
    agent_id: row.agentId,
    start: startOf(d),
    steps: d.steps,
    output: d.output ?? null,
    created_by: row.createdBy,
    created_at: isoTime(row.createdAt),
    updated_at: isoTime(row.updatedAt),
  };
}
