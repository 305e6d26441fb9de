import { isoTime } from '../lib/clock.js';
import type { AgentConfig } from './agent.schemas.js';
import { redactSecrets } from './agent-secrets.js';
import type { AgentRow } from './agents.repository.js';
import { webhookUrlFor } from './agent-config.js';

/** Spec 2.1 field order; configuration fields come from the stored version, the others from the agent row. */
const FIELD_ORDER = [
  'id', 'unique_name', 'name', 'organization_id', 'description', 'icon', 'avatar', 'status', 'type', 'deployment_type',
  'framework', 'version', 'has_pending_changes', 'is_latest', 'origin_template', 'environment_id', 'created_by',
  'created_at', 'model_provider', 'model_name', 'llm_reasoning_effort', 'llm_api_base', 'llm_credentials_key',
  'llm_credentials_key_type', 'llm_credentials', 'llm_extra_headers', 'instructions', 'expected_output', 'output_format',
  'output_schema', 'voice_id', 'deep_planning', 'enforce_deep_planning', 'tools', 'attached_tools', 'graph',
  'knowledge_bases', 'source_nodes', 'skills', 'prompts', 'oas', 'orchestration_nodes', 'connectivity_details',
  'access_scope', 'agno_settings', 'task_level_strategies', 'notification_settings', 'using_nemo', 'is_supervised',
  'is_autonomous', 'is_omni', 'discoverable', 'with_auto_context_management', 'developer_access',
  'should_stage_before_publish', 'on_prem_event_streaming', 'use_agent_gateway', 'deletable', 'use_oidc_pre_auth',
  'pre_auth_audiences', 'use_oidc_pre_auth_token_for_llm', 'oidc_pre_auth_token_llm_audience',
  'oidc_pre_auth_token_mcp_audience', 'can_self_schedule', 'max_self_schedules', 'use_dynamic_tools',
  'workspace_tools_enabled', 'webhook_url',
] as const;

export type AgentView = Record<string, unknown> & { id: string; organization_id: string; name: string };

export interface ViewState {
  version: number;
  hasPendingChanges: boolean;
  isLatest: boolean;
}

export { webhookUrlFor } from './agent-config.js';

/** The full agent (spec 2.1). `config` is a stored configuration; secrets are redacted unless `keepSecrets`. */
export function presentAgent(row: AgentRow, config: AgentConfig, state: ViewState, webhookBase: string, keepSecrets = false): AgentView {
  const cfg = (keepSecrets ? config : redactSecrets(config as unknown as Record<string, unknown>)) as Record<string, unknown>;
  const system: Record<string, unknown> = {
    id: row.id,
    unique_name: row.uniqueName,
    organization_id: row.organizationId,
    status: row.status,
    version: state.version,
    has_pending_changes: state.hasPendingChanges,
    is_latest: state.isLatest,
    created_at: isoTime(row.createdAt),
    webhook_url: webhookUrlFor(webhookBase, row.id),
  };
  const out: Record<string, unknown> = {};
  for (const k of FIELD_ORDER) out[k] = k in system ? system[k] : (cfg[k] ?? null);
  return out as AgentView;
}

/** `GET /v1/agents` items (docs/contract.md#agent-reads). */
export function presentAgentSummary(row: AgentRow, config: AgentConfig, hasPendingChanges: boolean) {
  return {
    id: row.id,
    name: config.name,
    unique_name: row.uniqueName,
    description: config.description,
    icon: config.icon,
    status: row.status,
    type: config.type,
    model_provider: config.model_provider,
    model_name: config.model_name,
    created_at: isoTime(row.createdAt),
    has_pending_changes: hasPendingChanges,
  };
}

export function presentVersionSummary(row: AgentRow, v: { version: number; config: AgentConfig; createdAt: number }) {
  return {
    version: v.version,
    is_latest: v.version === row.currentVersion,
    name: v.config.name,
    model_provider: v.config.model_provider,
    model_name: v.config.model_name,
    created_at: isoTime(v.createdAt),
  };
}
