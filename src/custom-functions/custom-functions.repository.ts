import type { Selectable } from 'kysely';
import { parseJson, type Db } from '../db/database.js';
import type { CustomFunctionsTables } from './custom-functions.tables.js';
import { batches, VALUES_PER_IN_LIST } from '../db/batches.js';
import { pageAndTotal } from '../db/paging.js';

export type CustomFunctionStatus = 'analysing' | 'ready' | 'error';

export interface CustomFunctionRecord {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  code: string;
  inputSchema: Record<string, unknown>;
  status: CustomFunctionStatus;
  analysisErrorDetails: string | null;
  createdAt: number;
  updatedAt: number;
}

function fromRow(r: Selectable<CustomFunctionsTables['custom_functions']>): CustomFunctionRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    name: r.name,
    description: r.description,
    code: r.code,
    inputSchema: parseJson(r.input_schema, {}),
    status: r.status as CustomFunctionStatus,
    analysisErrorDetails: r.analysis_error_details ?? null,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** SQL of custom functions; every query is scoped to one organization. */
export class CustomFunctionsRepository {
  constructor(private readonly db: Db) {}

  async insert(f: CustomFunctionRecord): Promise<void> {
    await this.db.kysely
      .insertInto('custom_functions')
      .values({
        id: f.id,
        organization_id: f.organizationId,
        name: f.name,
        description: f.description,
        code: f.code,
        input_schema: JSON.stringify(f.inputSchema),
        status: f.status,
        analysis_error_details: f.analysisErrorDetails,
        created_at: f.createdAt,
        updated_at: f.updatedAt,
      })
      .execute();
  }

  async find(organizationId: string, id: string): Promise<CustomFunctionRecord | undefined> {
    const r = await this.db.kysely
      .selectFrom('custom_functions')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && fromRow(r);
  }

  async findMany(organizationId: string, ids: string[]): Promise<CustomFunctionRecord[]> {
    const out: CustomFunctionRecord[] = [];
    for (const batch of batches(ids, VALUES_PER_IN_LIST)) {
      const rows = await this.db.kysely
        .selectFrom('custom_functions')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .where('id', 'in', batch)
        .execute();
      out.push(...rows.map(fromRow));
    }
    return out;
  }

  async list(organizationId: string, offset: number, limit: number): Promise<{ items: CustomFunctionRecord[]; total: number }> {
    const { rows, total } = await pageAndTotal(this.db.kysely.selectFrom('custom_functions').where('organization_id', '=', organizationId), (q) =>
      q.selectAll().orderBy('id', 'desc').offset(offset).limit(limit),
    );
    return { items: rows.map(fromRow), total };
  }

  /** Updates the given fields; returns false when the function does not exist in the organization. */
  async update(
    organizationId: string,
    id: string,
    patch: Partial<Pick<CustomFunctionRecord, 'name' | 'description' | 'code' | 'inputSchema' | 'status' | 'analysisErrorDetails'>>,
    now: number,
  ): Promise<boolean> {
    const values: Record<string, unknown> = { updated_at: now };
    if (patch.name !== undefined) values.name = patch.name;
    if (patch.description !== undefined) values.description = patch.description;
    if (patch.code !== undefined) values.code = patch.code;
    if (patch.inputSchema !== undefined) values.input_schema = JSON.stringify(patch.inputSchema);
    if (patch.status !== undefined) values.status = patch.status;
    if (patch.analysisErrorDetails !== undefined) values.analysis_error_details = patch.analysisErrorDetails;
    const r = await this.db.kysely
      .updateTable('custom_functions')
      .set(values)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Records an analysis outcome only if the code analysed is still the stored code (a later PATCH wins). */
  async setAnalysis(organizationId: string, id: string, code: string, status: CustomFunctionStatus, details: string | null, now: number): Promise<void> {
    await this.db.kysely
      .updateTable('custom_functions')
      .set({ status, analysis_error_details: details, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('code', '=', code)
      .execute();
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const r = await this.db.kysely.deleteFrom('custom_functions').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
