import { normalizeAgentConfig, type RunnableAgentConfig } from '../../src/agents/agent-config.js';

/**
 * A runnable agent configuration (RunRequest.agent) for tests that run the runtime without the agents service:
 * `fields` are completed by the agents domain's own normalizer, as a stored version is when read, so the runtime
 * sees what it sees in production. System fields (id, organization_id, version, ...) may be overridden in `fields`.
 */
export function runnableAgent(fields: Record<string, unknown>): RunnableAgentConfig {
  const system = {
    id: 'agent-1',
    organization_id: 'org-1',
    unique_name: null,
    status: 'ACTIVE',
    version: 1,
    has_pending_changes: false,
    is_latest: true,
    created_at: null,
    webhook_url: '',
  };
  const config = normalizeAgentConfig({ name: 'Test agent', ...fields });
  return { ...config, ...system, ...(pick(fields, Object.keys(system)) as Partial<typeof system>) };
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}
