import { canSeeAgent } from '../auth/agent-access.js';
import type { Principal } from '../auth/principal.js';
import { isUniqueViolation } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { PublicUrls } from '../lib/urls.js';
import type { AgentConfig, ToolEntry } from './agent.schemas.js';
import { presentAgent, type AgentView } from './agent.presenter.js';
import type { AgentRow, AgentsRepository } from './agents.repository.js';

export const duplicateName = () => AppError.invalid(['body', 'name'], 'an agent with this name already exists in the organization');

/**
 * What the agents service's parts (reads, writes, tool edits) share: loading a row the caller may see, presenting it,
 * saving a configuration as draft or new version, and the sub-agent ownership check of `tools`.
 */
export class AgentStore {
  constructor(
    readonly repo: AgentsRepository,
    readonly clock: Clock,
    readonly urls: PublicUrls,
    readonly secretBox: SecretBox,
  ) {}

  /**
   * `viewer` (the API's caller) sees only the agents `access_scope` lets it see (src/auth/agent-access.ts); another's
   * personal agent is answered as missing. Without one (the service's own reads) every agent of the organization.
   */
  async load(organizationId: string, id: string, viewer?: Principal): Promise<AgentRow> {
    const row = await this.repo.find(organizationId, id);
    if (!row || (viewer && !canSeeAgent(viewer, row.access))) throw AppError.notFound('Agent');
    return row;
  }

  async get(organizationId: string, id: string, viewer?: Principal): Promise<AgentView> {
    return this.view(await this.load(organizationId, id, viewer));
  }

  view(row: AgentRow): AgentView {
    const draft = row.draft !== null;
    return presentAgent(row, row.draft ?? row.config, { version: row.currentVersion, hasPendingChanges: draft, isLatest: !draft }, this.urls.webhook);
  }

  async persist(row: AgentRow, config: AgentConfig, publish: boolean, status?: string): Promise<void> {
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

  /**
   * A sub-agent runs for the calling agent's owner (src/tasks/submission-access.ts): another owner's personal agent is
   * refused here as the resolver refuses a missing one, so neither its existence nor its name shows, and no agent is
   * saved that could never call it.
   */
  async checkSubAgents(org: string, owner: string | null, tools: ToolEntry[] | undefined, loc: (string | number)[], indexed = true): Promise<void> {
    for (const [i, entry] of (tools ?? []).entries()) {
      if (entry.type !== 'agent') continue;
      const access = await this.repo.findAccess(org, entry.agent_id);
      if (access?.personal && access.owner !== null && access.owner !== owner) {
        throw AppError.invalid([...loc, ...(indexed ? [i] : []), 'agent_id'], `agent '${entry.agent_id}' not found`);
      }
    }
  }
}
