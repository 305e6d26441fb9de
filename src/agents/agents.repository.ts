import { setBounded } from '../lib/bounded-map.js';
import type { Db } from '../db/database.js';
import { parseJson } from '../db/database.js';
import { VersionedCache } from '../lib/versioned-cache.js';
import type { AgentConfig } from './agent.schemas.js';
import { normalizeAgentConfig } from './agent-config.js';
import type { AgentTables } from './agents.tables.js';
import type { AgentAccess } from '../auth/agent-access.js';
import { pageAndTotal } from '../db/paging.js';

export interface AgentRow {
  id: string;
  organizationId: string;
  name: string;
  uniqueName: string;
  status: string;
  currentVersion: number;
  /** The published configuration (secrets sealed). */
  config: AgentConfig;
  /** The staged edit, or null. */
  draft: AgentConfig | null;
  createdBy: string | null;
  /** Who may see it (src/auth/agent-access.ts): the authenticated creator, and whether the published scope is personal. */
  access: AgentAccess;
  createdAt: number;
  updatedAt: number;
}

export interface AgentVersionRow {
  version: number;
  config: AgentConfig;
  createdAt: number;
}

/** An agents row as the queries select it (every column but the soft-delete mark). */
type Raw = Omit<AgentTables['agents'], 'deleted_at' | 'personal'> & { personal: number };

function toRow(r: Raw, config?: AgentConfig, draft?: AgentConfig | null): AgentRow {
  return {
    id: r.id,
    organizationId: r.organization_id,
    name: r.name,
    uniqueName: r.unique_name,
    status: r.status,
    currentVersion: Number(r.current_version),
    config: config ?? readConfig(r.config),
    draft: draft !== undefined ? draft : r.draft ? readConfig(r.draft) : null,
    createdBy: r.created_by,
    access: { owner: r.owner, personal: Number(r.personal) === 1 },
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** Every configuration the repository reads goes through here: rows of older versions are completed once, on read. */
function readConfig(text: string | null | undefined): AgentConfig {
  return normalizeAgentConfig(parseJson<Record<string, unknown>>(text, {}));
}

const PARSED_MAX = 1000;

/** Frozen parses of configuration texts, by agent and kind, reused while the text is unchanged. */
class ParsedConfigs {
  private readonly entries = new Map<string, { text: string; value: AgentConfig }>();

  get(key: string, text: string): AgentConfig {
    const hit = this.entries.get(key);
    if (hit && hit.text === text) return hit.value;
    const value = deepFreeze(readConfig(text));
    setBounded(this.entries, key, { text, value }, PARSED_MAX);
    return value;
  }
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v)) deepFreeze(child);
  }
  return v;
}

const sharedKey = (organizationId: string, id: string) => `${organizationId}\u0000${id}`;

const COLUMNS = ['id', 'organization_id', 'name', 'unique_name', 'status', 'current_version', 'config', 'draft', 'created_by', 'owner', 'personal', 'created_at', 'updated_at'] as const;

/** SQL for agents and their immutable versions. Every query filters by organization and skips deleted agents. */
export class AgentsRepository {
  private readonly parsed = new ParsedConfigs();
  /** findShared's rows, kept while no configuration table changed (exact; read-through on PostgreSQL). */
  private readonly shared: VersionedCache<AgentRow>;

  constructor(private readonly db: Db) {
    this.shared = new VersionedCache(() => db.configVersion());
  }

  private live(organizationId: string) {
    return this.db.kysely.selectFrom('agents').where('organization_id', '=', organizationId).where('deleted_at', 'is', null);
  }

  /** Inserts the agent and its first published version together. */
  async insert(row: Omit<AgentRow, 'draft' | 'updatedAt'>): Promise<void> {
    const config = JSON.stringify(row.config);
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('agents')
        .values({
          id: row.id,
          organization_id: row.organizationId,
          name: row.name,
          unique_name: row.uniqueName,
          status: row.status,
          current_version: row.currentVersion,
          config,
          draft: null,
          created_by: row.createdBy,
          owner: row.access.owner,
          personal: personalOf(row.config),
          created_at: row.createdAt,
          updated_at: row.createdAt,
          deleted_at: null,
        })
        .execute();
      await trx
        .insertInto('agent_versions')
        .values({ agent_id: row.id, organization_id: row.organizationId, version: row.currentVersion, config, created_at: row.createdAt })
        .execute();
    });
  }

  async find(organizationId: string, id: string): Promise<AgentRow | undefined> {
    const r = await this.live(organizationId).select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return r && toRow(r as Raw);
  }

  /**
   * The same row, shared and frozen: on SQLite served from memory while no configuration table changed, and
   * parsed once per distinct JSON text, so the hot read paths (every submission reads its agent) neither query
   * nor re-parse an agent that has not changed. Read-only: callers must copy before changing anything.
   */
  async findShared(organizationId: string, id: string): Promise<AgentRow | undefined> {
    return this.shared.get(sharedKey(organizationId, id), async () => {
      const r = await this.live(organizationId).select(COLUMNS).where('id', '=', id).executeTakeFirst();
      if (!r) return undefined;
      const row = r as Raw;
      return Object.freeze(
        toRow({ ...row, config: '', draft: null }, this.parsed.get(`${row.id}:c`, row.config), row.draft ? this.parsed.get(`${row.id}:d`, row.draft) : null),
      );
    });
  }

  /** `findShared` when its row is cached and current; undefined means "ask findShared". */
  peekShared(organizationId: string, id: string): AgentRow | undefined {
    return this.shared.peek(sharedKey(organizationId, id));
  }

  /** Deleted agents too: their tasks stay readable, to whom the agent was visible. */
  async findAccess(organizationId: string, id: string): Promise<AgentAccess | undefined> {
    const r = await this.db.kysely.selectFrom('agents').select(['owner', 'personal']).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return r && { owner: r.owner, personal: Number(r.personal) === 1 };
  }

  async exists(organizationId: string, id: string): Promise<boolean> {
    return !!(await this.live(organizationId).select('id').where('id', '=', id).executeTakeFirst());
  }

  async findName(organizationId: string, id: string): Promise<string | undefined> {
    return (await this.live(organizationId).select('name').where('id', '=', id).executeTakeFirst())?.name;
  }

  async nameTaken(organizationId: string, name: string, exceptId?: string): Promise<boolean> {
    let q = this.live(organizationId).select('id').where('name', '=', name);
    if (exceptId) q = q.where('id', '!=', exceptId);
    return !!(await q.executeTakeFirst());
  }

  async uniqueNameTaken(organizationId: string, uniqueName: string): Promise<boolean> {
    const r = await this.db.kysely
      .selectFrom('agents')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('unique_name', '=', uniqueName)
      .executeTakeFirst();
    return !!r;
  }

  /** With `owner`: the organizational agents and that owner's personal ones (src/auth/agent-access.ts); else all. */
  async list(organizationId: string, offset: number, limit: number, owner?: string): Promise<{ rows: AgentRow[]; total: number }> {
    const visible = () => {
      const q = this.live(organizationId);
      return owner === undefined ? q : q.where((eb) => eb.or([eb('personal', '=', 0), eb('owner', 'is', null), eb('owner', '=', owner)]));
    };
    const { rows, total } = await pageAndTotal(visible(), (q) => q.select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit));
    return { rows: rows.map((r) => toRow(r as Raw)), total };
  }

  async saveDraft(organizationId: string, id: string, draft: AgentConfig, now: number, status?: string): Promise<void> {
    await this.db.kysely
      .updateTable('agents')
      .set({ draft: JSON.stringify(draft), name: draft.name, updated_at: now, ...(status ? { status } : {}) })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .execute();
  }

  /**
   * Publishes `config` as version `fromVersion + 1` and clears the draft. Returns false when another deployment got
   * there first (the version moved), so two concurrent deploys never produce the same version number.
   */
  async publish(organizationId: string, id: string, fromVersion: number, config: AgentConfig, now: number, status?: string): Promise<boolean> {
    const text = JSON.stringify(config);
    return this.db.kysely.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('agents')
        .set({ config: text, draft: null, name: config.name, current_version: fromVersion + 1, personal: personalOf(config), updated_at: now, ...(status ? { status } : {}) })
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .where('current_version', '=', fromVersion)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('agent_versions')
        .values({ agent_id: id, organization_id: organizationId, version: fromVersion + 1, config: text, created_at: now })
        .execute();
      return true;
    });
  }

  async setStatus(organizationId: string, id: string, status: string, now: number): Promise<void> {
    await this.db.kysely
      .updateTable('agents')
      .set({ status, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .execute();
  }

  async softDelete(organizationId: string, id: string, now: number): Promise<boolean> {
    const r = await this.db.kysely
      .updateTable('agents')
      .set({ deleted_at: now, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async listVersions(organizationId: string, id: string, offset: number, limit: number): Promise<{ rows: AgentVersionRow[]; total: number }> {
    const base = this.db.kysely.selectFrom('agent_versions').where('organization_id', '=', organizationId).where('agent_id', '=', id);
    const { rows, total } = await pageAndTotal(base, (q) => q.select(['version', 'config', 'created_at']).orderBy('version', 'desc').offset(offset).limit(limit));
    return {
      rows: rows.map((r) => ({ version: Number(r.version), config: readConfig(r.config), createdAt: Number(r.created_at) })),
      total,
    };
  }

  async findVersion(organizationId: string, id: string, version: number): Promise<AgentVersionRow | undefined> {
    const r = await this.db.kysely
      .selectFrom('agent_versions')
      .select(['version', 'config', 'created_at'])
      .where('organization_id', '=', organizationId)
      .where('agent_id', '=', id)
      .where('version', '=', version)
      .executeTakeFirst();
    return r && { version: Number(r.version), config: readConfig(r.config), createdAt: Number(r.created_at) };
  }
}

/** The `personal` column: the published version's access_scope (its schema default is personal). */
function personalOf(config: AgentConfig): number {
  return config.access_scope === 'organizational' ? 0 : 1;
}
