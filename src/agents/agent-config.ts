import { AGENT_CONFIG_FIELDS, CreateAgentBody, type AgentConfig } from './agent.schemas.js';
import { isoTime } from '../lib/clock.js';

/**
 * The agent configuration from storage to the runtime. `AgentConfig` (agent.schemas.ts) is the create schema's output:
 * every stored version has that shape once `normalizeAgentConfig` has run on it, which the repository does once for
 * each configuration it reads. Everything after (the agents service, the tasks domain, the runtime) reads typed fields
 * and applies no defaults of its own.
 */

/**
 * The create schema's defaults, computed from the schema itself so a new field's default is never written twice.
 * `model_name` and `created_by` have none there (the service fills them at create): an older row without them reads
 * null, and the runtime chooses the provider's default model (llm/model-catalog.ts chooseModel).
 */
const DEFAULTS: Readonly<Record<string, unknown>> = Object.freeze({
  ...CreateAgentBody.parse({ name: '-' }),
  model_name: null,
  created_by: null,
});
/** Objects whose keys gained fields over time: a stored one is completed key by key, not replaced. */
const NESTED = ['agno_settings', 'instructions'] as const;

/**
 * Completes a configuration as stored (parsed JSON, owned by the caller: it is completed in place) into an
 * `AgentConfig`. Versions stored before a field existed lack it: the field gets the create schema's default, which
 * is also what the runtime did with an absent field before configurations were typed. Values that are present are
 * kept as they are (they were validated when written).
 */
export function normalizeAgentConfig(stored: Record<string, unknown>): AgentConfig {
  for (const k of AGENT_CONFIG_FIELDS) {
    if (stored[k] === undefined && k in DEFAULTS) stored[k] = structuredClone(DEFAULTS[k]);
  }
  for (const k of NESTED) stored[k] = completed(stored[k], DEFAULTS[k] as Record<string, unknown>);
  const agno = stored.agno_settings as Record<string, unknown>;
  agno.tool_calls_compression = completed(agno.tool_calls_compression, (DEFAULTS.agno_settings as Record<string, unknown>).tool_calls_compression as Record<string, unknown>);
  return stored as AgentConfig;
}

function completed(value: unknown, defaults: Record<string, unknown>): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return structuredClone(defaults);
  const v = value as Record<string, unknown>;
  for (const [k, d] of Object.entries(defaults)) if (v[k] === undefined) v[k] = structuredClone(d);
  return v;
}

/** The fields of the agent row a run sees beside its configuration (spec 2.1 system fields). */
export type AgentSystemFields = {
  id: string;
  organization_id: string;
  unique_name: string | null;
  status: string;
  /** The version this configuration is: a published number or 'draft'. */
  version: number | 'draft';
  has_pending_changes: boolean;
  is_latest: boolean;
  created_at: string | null;
  webhook_url: string;
};

/**
 * What the runtime runs (AgentsService.getRunnable, the tasks domain's RunnableAgent.config, RunRequest.agent): one
 * version's configuration, secrets revealed, with the agent's system fields. A type alias, not an interface, so it
 * is also a `Record<string, unknown>` for the few readers that take any configuration.
 */
export type RunnableAgentConfig = AgentConfig & AgentSystemFields;

/** The runnable configuration of one version of a row; `config` is normalized and revealed. */
/** The agent row's fields a runnable configuration shows (structural: the repository's AgentRow has them). */
export type RunnableRowFields = { id: string; uniqueName: string; organizationId: string; status: string; draft: unknown; currentVersion: number; createdAt: number };

export function runnableConfig(row: RunnableRowFields, config: AgentConfig, version: number | 'draft', webhookBase: string): RunnableAgentConfig {
  return {
    ...config,
    id: row.id,
    unique_name: row.uniqueName,
    organization_id: row.organizationId,
    status: row.status,
    version,
    has_pending_changes: row.draft !== null,
    is_latest: version === row.currentVersion,
    created_at: isoTime(row.createdAt),
    webhook_url: webhookUrlFor(webhookBase, row.id),
  };
}

/** An agent's synchronous webhook address (its `webhook_url`). */
export function webhookUrlFor(webhookBase: string, agentId: string): string {
  return `${webhookBase}/?agent_id=${agentId}&asynchronous=false`;
}
