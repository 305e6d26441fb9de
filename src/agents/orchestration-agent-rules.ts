import { AppError, type ValidationIssue } from '../errors.js';
import { AgnoSettings, Instructions, type AgentConfig } from './agent.schemas.js';

/**
 * An `orchestration` agent (the agent of a workflow, docs/workflows.md) runs its workflow's steps, not Agentry's model
 * loop: instructions, tools, knowledge, the LLM fields, the agno_settings switches (guardrails, memory, history,
 * tool_call_limit), supervision, planning and the iterative strategy would be stored and never read. So a value other
 * than the create default is refused (422, every field named), as external agents refuse theirs
 * (src/external-agents/connectivity.ts). What acts on such an agent: name, description, status, access, notification
 * settings, the retry strategy and daily limit (the worker's), output_format json with output_schema (the workflow's
 * result is checked against it: src/workflows/workflow.runner.ts).
 */

type Loc = (string | number)[];
const MSG = "an agent of type 'orchestration' runs its workflow's steps, not a model loop";

/** Top-level fields that are inert on a workflow's agent unless empty, null or false. */
const LOOP_FIELDS = [
  'expected_output',
  'tools',
  'attached_tools',
  'graph',
  'knowledge_bases',
  'skills',
  'llm_api_base',
  'llm_credentials_key',
  'llm_credentials',
  'llm_extra_headers',
  'is_supervised',
  'deep_planning',
  'enforce_deep_planning',
  'can_self_schedule',
  'use_oidc_pre_auth_token_for_llm',
] as const satisfies readonly (keyof AgentConfig)[];

const isEmpty = (v: unknown) =>
  v === null || v === undefined || v === false || v === '' || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);

let agnoDefaults: Record<string, unknown> | undefined;
let instructionDefaults: Record<string, unknown> | undefined;

/**
 * `changed`: the fields of this request (PATCH) or undefined (create). The model fields are refused only when a
 * request changes them: the create schema fills them with the catalog's default, which may move.
 */
export function refuseLoopSettingsOnOrchestration(cfg: AgentConfig, base?: AgentConfig, changed?: Record<string, unknown>): void {
  if (cfg.type !== 'orchestration') return;
  const issues: ValidationIssue[] = [];
  const refuse = (loc: Loc, what: string) => issues.push({ loc: ['body', ...loc], msg: `Value error, ${MSG}: ${what} would do nothing`, type: 'value_error' });
  for (const f of LOOP_FIELDS) if (!isEmpty(cfg[f])) refuse([f], f);
  instructionDefaults ??= Instructions.parse({});
  if (JSON.stringify(cfg.instructions) !== JSON.stringify(instructionDefaults)) refuse(['instructions'], 'instructions');
  if (cfg.llm_reasoning_effort !== null && cfg.llm_reasoning_effort !== 'medium') refuse(['llm_reasoning_effort'], 'llm_reasoning_effort');
  for (const f of ['model_provider', 'model_name'] as const) {
    if (changed && f in changed && base && cfg[f] !== base[f]) refuse([f], f);
  }
  // prompt_injection_content_action has no schema default; 'warn' is what its absence means.
  agnoDefaults ??= { ...(AgnoSettings.parse({}) as Record<string, unknown>), prompt_injection_content_action: 'warn' };
  const agno = (cfg.agno_settings ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(agno)) {
    if (v === undefined) continue;
    if (JSON.stringify(v) !== JSON.stringify(agnoDefaults[k])) refuse(['agno_settings', k], `agno_settings.${k}`);
  }
  if (cfg.task_level_strategies?.iterative_strategy) refuse(['task_level_strategies', 'iterative_strategy'], 'iterative_strategy');
  if (cfg.task_level_strategies?.stop_strategy?.enabled === true) refuse(['task_level_strategies', 'stop_strategy'], 'stop_strategy');
  if (issues.length) throw AppError.validation(issues);
}
