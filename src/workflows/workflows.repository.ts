import type { Db } from '../db/database.js';
import { parseJson } from '../db/database.js';
import type { WorkflowDefinition } from './workflow.schemas.js';
import { pageAndTotal } from '../db/paging.js';

export interface WorkflowRow {
  id: string;
  organizationId: string;
  currentVersion: number;
  /** The published definition. */
  definition: WorkflowDefinition;
  /** The staged definition, or null. */
  draft: WorkflowDefinition | null;
  agentId: string | null;
  createdBy: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface WorkflowVersionRow {
  version: number;
  definition: WorkflowDefinition;
  createdAt: number;
}

const COLUMNS = ['id', 'organization_id', 'current_version', 'definition', 'draft', 'agent_id', 'created_by', 'created_at', 'updated_at'] as const;

type Raw = { id: string; organization_id: string; current_version: number; definition: string; draft: string | null; agent_id: string | null; created_by: string | null; created_at: number; updated_at: number };

function toRow(r: Raw): WorkflowRow {
  return {
    id: r.id,
    organizationId: r.organization_id,
    currentVersion: Number(r.current_version),
    definition: parseJson<WorkflowDefinition>(r.definition, {} as WorkflowDefinition),
    draft: r.draft === null ? null : parseJson<WorkflowDefinition>(r.draft, {} as WorkflowDefinition),
    agentId: r.agent_id,
    createdBy: r.created_by,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** SQL of workflows and their versions; every query filters by organization and skips deleted workflows. */
export class WorkflowsRepository {
  constructor(private readonly db: Db) {}

  private live(orgId: string) {
    return this.db.kysely.selectFrom('workflows').where('organization_id', '=', orgId).where('deleted_at', 'is', null);
  }

  async nameTaken(orgId: string, name: string, except?: string): Promise<boolean> {
    let q = this.live(orgId).select('id').where('name', '=', name);
    if (except) q = q.where('id', '!=', except);
    return (await q.executeTakeFirst()) !== undefined;
  }

  /** Inserts the workflow and its first published version together. */
  async insert(w: { id: string; organizationId: string; version: number; definition: WorkflowDefinition; agentId: string | null; createdBy: string | null; now: number }): Promise<void> {
    const text = JSON.stringify(w.definition);
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('workflows')
        .values({ organization_id: w.organizationId, id: w.id, name: w.definition.name, current_version: w.version, definition: text, draft: null, agent_id: w.agentId, created_by: w.createdBy, created_at: w.now, updated_at: w.now, deleted_at: null })
        .execute();
      await trx.insertInto('workflow_versions').values({ organization_id: w.organizationId, workflow_id: w.id, version: w.version, definition: text, created_at: w.now }).execute();
    });
  }

  async find(orgId: string, id: string): Promise<WorkflowRow | undefined> {
    const r = await this.live(orgId).select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return r && toRow(r as Raw);
  }

  async list(orgId: string, offset: number, limit: number): Promise<{ rows: WorkflowRow[]; total: number }> {
    const { rows, total } = await pageAndTotal(this.live(orgId), (q) => q.select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit));
    return { rows: rows.map((r) => toRow(r as Raw)), total };
  }

  async saveDraft(orgId: string, id: string, draft: WorkflowDefinition, now: number): Promise<void> {
    await this.db.kysely
      .updateTable('workflows')
      .set({ draft: JSON.stringify(draft), name: draft.name, updated_at: now })
      .where('organization_id', '=', orgId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .execute();
  }

  /**
   * Publishes `definition` as version `fromVersion + 1` and clears the draft; false when another deploy moved the
   * version first (as agents do), so two deploys never make the same version number.
   */
  async publish(orgId: string, id: string, fromVersion: number, definition: WorkflowDefinition, now: number): Promise<boolean> {
    const text = JSON.stringify(definition);
    return this.db.kysely.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('workflows')
        .set({ definition: text, draft: null, name: definition.name, current_version: fromVersion + 1, updated_at: now })
        .where('organization_id', '=', orgId)
        .where('id', '=', id)
        .where('current_version', '=', fromVersion)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await trx.insertInto('workflow_versions').values({ organization_id: orgId, workflow_id: id, version: fromVersion + 1, definition: text, created_at: now }).execute();
      return true;
    });
  }

  async setAgent(orgId: string, id: string, agentId: string, now: number): Promise<void> {
    await this.db.kysely.updateTable('workflows').set({ agent_id: agentId, updated_at: now }).where('organization_id', '=', orgId).where('id', '=', id).where('deleted_at', 'is', null).execute();
  }

  async softDelete(orgId: string, id: string, now: number): Promise<boolean> {
    const r = await this.db.kysely
      .updateTable('workflows')
      .set({ deleted_at: now, updated_at: now })
      .where('organization_id', '=', orgId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async listVersions(orgId: string, id: string, offset: number, limit: number): Promise<{ rows: WorkflowVersionRow[]; total: number }> {
    const base = this.db.kysely.selectFrom('workflow_versions').where('organization_id', '=', orgId).where('workflow_id', '=', id);
    const { rows, total } = await pageAndTotal(base, (q) => q.select(['version', 'definition', 'created_at']).orderBy('version', 'desc').offset(offset).limit(limit));
    return { rows: rows.map(toVersion), total };
  }

  async findVersion(orgId: string, id: string, version: number): Promise<WorkflowVersionRow | undefined> {
    const r = await this.db.kysely
      .selectFrom('workflow_versions')
      .select(['version', 'definition', 'created_at'])
      .where('organization_id', '=', orgId)
      .where('workflow_id', '=', id)
      .where('version', '=', version)
      .executeTakeFirst();
    return r && toVersion(r);
  }
}

function toVersion(r: { version: number; definition: string; created_at: number }): WorkflowVersionRow {
  return { version: Number(r.version), definition: parseJson<WorkflowDefinition>(r.definition, {} as WorkflowDefinition), createdAt: Number(r.created_at) };
}
