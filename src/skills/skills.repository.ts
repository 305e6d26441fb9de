import type { Db } from '../db/database.js';
import type { SkillsTables } from './skills.tables.js';
import { batches, VALUES_PER_IN_LIST } from '../db/batches.js';

export interface OrgSkillRecord {
  organizationId: string;
  name: string;
  description: string;
  instructions: string;
  createdAt: number;
  updatedAt: number;
}

/** SQL of organization skills; every query is scoped to one organization. */
export class SkillsRepository {
  constructor(private readonly db: Db) {}

  async insert(s: OrgSkillRecord): Promise<void> {
    await this.db.kysely
      .insertInto('skills')
      .values({
        organization_id: s.organizationId,
        name: s.name,
        description: s.description,
        instructions: s.instructions,
        created_at: s.createdAt,
        updated_at: s.updatedAt,
      })
      .execute();
  }

  async find(organizationId: string, name: string): Promise<OrgSkillRecord | undefined> {
    const r = await this.db.kysely.selectFrom('skills').selectAll().where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
    return r && toRecord(r);
  }

  async findMany(organizationId: string, names: string[]): Promise<OrgSkillRecord[]> {
    const out: OrgSkillRecord[] = [];
    for (const batch of batches(names, VALUES_PER_IN_LIST)) {
      const rows = await this.db.kysely.selectFrom('skills').selectAll().where('organization_id', '=', organizationId).where('name', 'in', batch).execute();
      out.push(...rows.map(toRecord));
    }
    return out;
  }

  async count(organizationId: string): Promise<number> {
    const r = await this.db.kysely
      .selectFrom('skills')
      .where('organization_id', '=', organizationId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async list(organizationId: string, offset: number, limit: number): Promise<OrgSkillRecord[]> {
    if (limit <= 0) return [];
    const rows = await this.db.kysely
      .selectFrom('skills')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('name')
      .offset(offset)
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  async delete(organizationId: string, name: string): Promise<boolean> {
    const r = await this.db.kysely.deleteFrom('skills').where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

function toRecord(r: SkillsTables['skills']): OrgSkillRecord {
  return {
    organizationId: r.organization_id,
    name: r.name,
    description: r.description,
    instructions: r.instructions,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}
