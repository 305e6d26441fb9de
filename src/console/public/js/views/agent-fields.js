/**
 * The agent configuration as the editor shows it: field groups in the order of spec 2.1/2.5, each field with the
 * path it has in the API body. The path is what ties a 422's `loc` to the input that shows the message, and what
 * builds the PATCH (only changed paths are sent; agno_settings and instructions merge key by key on the server).
 * Pure data and pure helpers: unit-tested in Node (test/console/agent-form.test.ts).
 */

export const AGENT_TYPES = ['manager', 'regular', 'a2a', 'curl'];
export const OUTPUT_FORMATS = ['markdown', 'text', 'json'];
export const REASONING_EFFORTS = ['low', 'medium', 'high', 'xhigh'];
export const ACCESS_SCOPES = ['personal', 'organizational'];
export const KB_STRATEGIES = ['vanilla', 'agentic_rag'];
export const TOOL_TYPES = ['custom_function', 'mcp', 'agent', 'action', 'skill', 'workflow'];

/**
 * Every configuration field of the agent (PATCH accepts exactly these besides `status`): kept equal to the server's
 * AGENT_CONFIG_FIELDS by a test, because a rollback sends a version's configuration back field by field.
 */
export const CONFIG_FIELDS = [
  'name', 'description', 'icon', 'avatar', 'type', 'deployment_type', 'framework', 'origin_template', 'environment_id',
  'created_by', 'model_provider', 'model_name', 'llm_reasoning_effort', 'llm_api_base', 'llm_credentials_key',
  'llm_credentials_key_type', 'llm_credentials', 'llm_extra_headers', 'instructions', 'expected_output', 'output_format',
  'output_schema', 'voice_id', 'deep_planning', 'enforce_deep_planning', 'tools', 'attached_tools', 'graph',
  'knowledge_bases', 'source_nodes', 'skills', 'prompts', 'oas', 'orchestration_nodes', 'connectivity_details',
  'access_scope', 'agno_settings', 'task_level_strategies', 'notification_settings', 'using_nemo', 'is_supervised',
  'is_autonomous', 'is_omni', 'discoverable', 'with_auto_context_management', 'developer_access',
  'should_stage_before_publish', 'on_prem_event_streaming', 'use_agent_gateway', 'deletable', 'use_oidc_pre_auth',
  'pre_auth_audiences', 'use_oidc_pre_auth_token_for_llm', 'oidc_pre_auth_token_llm_audience',
  'oidc_pre_auth_token_mcp_audience', 'can_self_schedule', 'max_self_schedules', 'use_dynamic_tools',
  'workspace_tools_enabled',
];

/**
 * Fields a rollback does not send back: `created_by` is who made the agent, and the write-only LLM key and headers
 * read back as "********", which the server resolves against the *current* stored value (and refuses, 422, where
 * the current version has none); a rotated key must not come back with an old configuration. Secrets stay as they are now. The tool bookkeeping (`graph`,
 * `attached_tools`) is sent with `tools`: without it the server would add the old tools onto the current graph and
 * keep tools attached since.
 */
export const ROLLBACK_SKIP = new Set(['created_by', 'llm_credentials', 'llm_extra_headers']);

const agno = (key, label, kind = 'checkbox', extra = {}) => ({ path: ['agno_settings', key], label, kind, ...extra });

/** kind: text | textarea | select | checkbox | number | lines | json | credentials | tools | knowledge_bases */
export const FIELD_GROUPS = [
  {
    id: 'general',
    title: 'General',
    fields: [
      { path: ['name'], label: 'Name', kind: 'text', required: true, hint: 'Unique within the organization.' },
      { path: ['description'], label: 'Description', kind: 'textarea', rows: 2 },
      { path: ['icon'], label: 'Icon', kind: 'text', hint: 'One emoji.' },
      { path: ['type'], label: 'Type', kind: 'select', options: AGENT_TYPES, hint: 'manager: tools, sub-agents, multi-step. regular: no orchestration. a2a/curl: external agents.' },
      { path: ['connectivity_details'], label: 'Remote endpoint (a2a and curl agents, JSON)', kind: 'json', rows: 3, hint: 'See docs/external-agents.md. Leave {} for other types.' },
    ],
  },
  {
    id: 'llm',
    title: 'Model',
    fields: [
      { path: ['model_provider'], label: 'Provider', kind: 'select', options: 'providers' },
      { path: ['model_name'], label: 'Model', kind: 'text', list: 'models', hint: 'Empty: the provider\u2019s default model.' },
      { path: ['llm_reasoning_effort'], label: 'Reasoning effort', kind: 'select', options: REASONING_EFFORTS },
      { path: ['llm_api_base'], label: 'API base URL', kind: 'text', hint: 'A custom endpoint (OpenAI-compatible gateways, self-hosted models).' },
      { path: ['llm_credentials'], label: 'API key', kind: 'credentials', hint: 'Write-only: stored encrypted, never shown. Leave empty to keep the stored key.' },
      { path: ['llm_credentials_key'], label: 'Stored credentials reference', kind: 'text' },
      { path: ['llm_extra_headers'], label: 'Extra headers (JSON object)', kind: 'json', rows: 3, hint: 'Every value is stored encrypted and shown as ********; write ******** back to keep one.' },
    ],
  },
  {
    id: 'instructions',
    title: 'Instructions',
    fields: [
      { path: ['instructions', 'role'], label: 'Role', kind: 'lines', hint: 'One statement per line.' },
      { path: ['instructions', 'goal'], label: 'Goals', kind: 'lines', hint: 'One goal per line.' },
      { path: ['instructions', 'general'], label: 'General instructions', kind: 'textarea', rows: 5 },
      { path: ['expected_output'], label: 'Expected output', kind: 'textarea', rows: 2 },
    ],
  },
  {
    id: 'output',
    title: 'Output',
    fields: [
      { path: ['output_format'], label: 'Output format', kind: 'select', options: OUTPUT_FORMATS },
      { path: ['output_schema'], label: 'Output schema (JSON Schema, for json)', kind: 'json', rows: 6, hint: 'Empty for none.' },
    ],
  },
  {
    id: 'tools',
    title: 'Tools',
    fields: [{ path: ['tools'], label: 'Tools', kind: 'tools' }],
  },
  {
    id: 'knowledge',
    title: 'Knowledge bases',
    fields: [{ path: ['knowledge_bases'], label: 'Knowledge bases', kind: 'knowledge_bases' }],
  },
  {
    id: 'access',
    title: 'Access and behaviour',
    fields: [
      { path: ['access_scope'], label: 'Access scope', kind: 'select', options: ACCESS_SCOPES },
      { path: ['developer_access'], label: 'Developer access (API and webhooks may invoke it)', kind: 'checkbox' },
      { path: ['should_stage_before_publish'], label: 'Stage edits as a draft before publishing', kind: 'checkbox' },
      { path: ['is_supervised'], label: 'Supervised (approve mutating tool calls)', kind: 'checkbox' },
      { path: ['discoverable'], label: 'Discoverable', kind: 'checkbox' },
      { path: ['can_self_schedule'], label: 'May schedule its own runs', kind: 'checkbox' },
      { path: ['max_self_schedules'], label: 'Most self-schedules', kind: 'number', min: 1, max: 1000 },
      { path: ['use_oidc_pre_auth'], label: 'Require an end-user token (OIDC pre-auth)', kind: 'checkbox' },
      { path: ['pre_auth_audiences'], label: 'Pre-auth audiences', kind: 'lines' },
      { path: ['with_auto_context_management'], label: 'Manage the context window automatically', kind: 'checkbox' },
      { path: ['workspace_tools_enabled'], label: 'Workspace tools', kind: 'checkbox' },
      { path: ['task_level_strategies'], label: 'Task strategies (JSON: retry, iterations and end condition, stop, daily limit, duplicate events)', kind: 'json', rows: 3 },
      { path: ['notification_settings'], label: 'Notifications (JSON: on success and on error)', kind: 'json', rows: 3, hint: 'See docs/notifications.md.' },
    ],
  },
  {
    id: 'agno',
    title: 'Memory and guardrails (agno settings)',
    fields: [
      agno('session_storage', 'Session storage'),
      agno('num_history_runs', 'Runs of history in context', 'number', { min: 0 }),
      agno('user_memories', 'User memories'),
      agno('agent_memories', 'Agent memories'),
      agno('agentic_memory', 'Agentic memory'),
      agno('session_summaries', 'Session summaries'),
      agno('add_user_to_context', 'Tell the model who the user is'),
      agno('tool_call_limit', 'Tool call limit (0: none)', 'number', { min: 0 }),
      agno('max_tool_calls_from_history', 'Tool calls kept from history', 'number', { min: 0 }),
      agno('pii_detection_enabled', 'Detect PII'),
      agno('pii_detection_mask', 'Mask PII (otherwise refuse)'),
      agno('prompt_injection_detection_enabled', 'Detect prompt injection'),
      agno('openai_moderation_enabled', 'OpenAI moderation'),
      agno('reasoning_tools_enabled', 'Reasoning tools'),
    ],
  },
];

export const ALL_FIELDS = FIELD_GROUPS.flatMap((g) => g.fields);

export function fieldId(path) {
  return `field-${path.join('-')}`;
}

export function getPath(obj, path) {
  let v = obj;
  for (const k of path) v = v && typeof v === 'object' ? v[k] : undefined;
  return v;
}

export function setPath(obj, path, value) {
  let o = obj;
  for (const k of path.slice(0, -1)) o = o[k] && typeof o[k] === 'object' ? o[k] : (o[k] = {});
  o[path[path.length - 1]] = value;
  return obj;
}

/**
 * The field a 422 issue belongs to: the one whose path is the longest prefix of `loc` after "body". Issues inside
 * a list (`tools.1.custom_function_id`) land on the list's field; `rest` keeps what follows for the message.
 */
export function fieldForLoc(loc, fields = ALL_FIELDS) {
  const rest = (Array.isArray(loc) ? loc : []).slice(loc?.[0] === 'body' ? 1 : 0).map(String);
  let best = null;
  for (const f of fields) {
    if (f.path.length > rest.length || !f.path.every((k, i) => k === rest[i])) continue;
    if (!best || f.path.length > best.path.length) best = f;
  }
  return best ? { field: best, rest: rest.slice(best.path.length) } : null;
}

/** Stable JSON (sorted keys): equal configurations compare equal whatever the key order. */
export function stableJson(v) {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`).join(',')}}`;
  return JSON.stringify(v ?? null);
}

/**
 * The body to send: on create every value the form holds; on edit only the paths whose value changed from
 * `initial` (a nested path becomes a nested object, which the server merges).
 */
export function buildBody(values, initial = null) {
  const body = {};
  for (const [key, value] of values) {
    const path = key.split('.');
    if (value === undefined) continue;
    if (initial && stableJson(getPath(initial, path)) === stableJson(value)) continue;
    setPath(body, path, value);
  }
  return body;
}

/**
 * The configuration fields that differ between two agent views (the draft and the deployed version), each with
 * both values. Secrets show as "********" on both sides, so a changed key shows as unchanged: the diff says so.
 */
export function configDiff(before, after) {
  const out = [];
  for (const k of CONFIG_FIELDS) {
    if (k === 'graph' || k === 'attached_tools') continue; // derived from `tools`; shown through it
    const a = before?.[k] ?? null;
    const b = after?.[k] ?? null;
    if (stableJson(a) === stableJson(b)) continue;
    // Settings objects (agno_settings, instructions) show the keys that changed, not the whole object twice.
    if (isPlainObject(a) && isPlainObject(b)) {
      for (const sub of [...new Set([...Object.keys(a), ...Object.keys(b)])]) {
        if (stableJson(a[sub]) !== stableJson(b[sub])) out.push({ field: `${k}.${sub}`, before: a[sub] ?? null, after: b[sub] ?? null });
      }
    } else out.push({ field: k, before: a, after: b });
  }
  return out;
}

function isPlainObject(v) {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** The PATCH that makes the working copy equal to a published version (rollback): its configuration fields. */
export function rollbackBody(version) {
  const body = {};
  for (const k of CONFIG_FIELDS) if (!ROLLBACK_SKIP.has(k) && k in version) body[k] = version[k];
  return body;
}

/** A tool row of the editor -> a `tools` entry of the API (spec 2.3). */
export function toolEntry(type, ref, operations = '') {
  const r = String(ref ?? '').trim();
  switch (type) {
    case 'custom_function':
      return { type, custom_function_id: r };
    case 'mcp':
      return /^https?:\/\//.test(r) ? { type, url: r } : { type, mcp_id: r };
    case 'agent':
      return { type, agent_id: r };
    case 'workflow':
      return { type, workflow_id: r };
    case 'skill':
      return { type, skill_name: r };
    case 'action':
      return { type, connection_id: r, operation_ids: String(operations).split(/[\s,]+/).filter(Boolean) };
    default:
      return { type, ref: r };
  }
}

/** What a `tools` entry refers to, for the list and for DELETE /v1/agents/{id}/tools/{ref}. */
export function toolRef(entry) {
  return entry?.custom_function_id ?? entry?.mcp_id ?? entry?.url ?? entry?.agent_id ?? entry?.workflow_id ?? entry?.skill_name ?? entry?.connection_id ?? '';
}
