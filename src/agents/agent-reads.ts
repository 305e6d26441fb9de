import { canSeeAgent, listOwner, type AgentAccess } from '../auth/agent-access.js';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { pageOf, type Page } from '../http/router.js';
import type { AgentConfig } from './agent.schemas.js';
import { presentAgent, presentAgentSummary, presentVersionSummary, type AgentView } from './agent.presenter.js';
import { revealSecrets } from './agent-secrets.js';
import { runnableConfig } from './agent-config.js';
import type { RunnableAgent, SubmittableAgent as SubmittablePort } from '../tasks/task-agents.js';
import type { AgentStore } from './agent-store.js';
import type { AgentRow } from './agents.repository.js';

/** The tasks domain's ports, which this service serves: the runtime's runnable agent and a submission's view. */
export type { RunnableAgent } from '../tasks/task-agents.js';
/** A submission's view of an agent; this service always knows who may run it. */
export type SubmittableAgent = SubmittablePort & { access: AgentAccess };

/** Reads of agents: lists and versions for the API, and the ports other domains read agents through (runtime, tasks, webhooks). */
export class AgentReads {
  /** getRunnable()'s revealed configurations of each shared row (see getRunnable). */
  private readonly runnables = new WeakMap<AgentRow, { current?: RunnableAgent; draft?: RunnableAgent }>();
  /** find()'s snapshot of each shared row (see find). */
  private readonly snapshots = new WeakMap<AgentRow, SubmittableAgent & { developerAccess: boolean }>();

  constructor(private readonly store: AgentStore) {}

  private get repo() {
    return this.store.repo;
  }

  async list(viewer: Principal, page: number, perPage: number): Promise<Page<ReturnType<typeof presentAgentSummary>>> {
    const { rows, total } = await this.repo.list(viewer.organizationId, (page - 1) * perPage, perPage, listOwner(viewer));
    return pageOf(rows.map((r) => presentAgentSummary(r, r.draft ?? r.config, r.draft !== null)), total, page, perPage);
  }

  async listFull(viewer: Principal, page: number, perPage: number): Promise<Page<AgentView>> {
    const { rows, total } = await this.repo.list(viewer.organizationId, (page - 1) * perPage, perPage, listOwner(viewer));
    return pageOf(rows.map((r) => this.store.view(r)), total, page, perPage);
  }

  async listVersions(organizationId: string, id: string, page: number, perPage: number, viewer?: Principal) {
    const row = await this.store.load(organizationId, id, viewer);
    const { rows, total } = await this.repo.listVersions(organizationId, id, (page - 1) * perPage, perPage);
    return pageOf(rows.map((v) => presentVersionSummary(row, v)), total, page, perPage);
  }

  async getVersion(organizationId: string, id: string, version: number, viewer?: Principal): Promise<AgentView> {
    const row = await this.store.load(organizationId, id, viewer);
    const v = await this.repo.findVersion(organizationId, id, version);
    if (!v) throw AppError.notFound('Agent version');
    return presentAgent(row, v.config, { version: v.version, hasPendingChanges: false, isLatest: v.version === row.currentVersion }, this.store.urls.webhook);
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
    const revealed = revealSecrets(config as unknown as Record<string, unknown>, this.store.secretBox) as unknown as AgentConfig;
    const runnable: RunnableAgent = deepFreeze({ id: row.id, organization_id: row.organizationId, status: row.status, version: v, config: runnableConfig(row, revealed, v, this.store.urls.webhook) });
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

  /** `find` answered from memory: the snapshot of a cached, current row; undefined means "ask find". */
  findCached(organizationId: string, id: string): (SubmittableAgent & { developerAccess: boolean }) | undefined {
    const row = this.repo.peekShared(organizationId, id);
    return row && this.snapshots.get(row);
  }

  /** Whether the caller may see the agent (a missing one: false), for routes of other domains keyed by an agent. */
  async visibleTo(viewer: Principal, id: string): Promise<boolean> {
    const row = await this.repo.findShared(viewer.organizationId, id);
    return !!row && canSeeAgent(viewer, row.access);
  }

  private async submittable(row: AgentRow, version?: number | 'draft'): Promise<SubmittableAgent> {
    const { config, version: v } = await this.pickVersion(row, version);
    return { id: row.id, organization_id: row.organizationId, status: row.status, version: v, config, access: row.access };
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
}

/** Freezes an object graph (a revealed configuration shared by concurrent runs). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
