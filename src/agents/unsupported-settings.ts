import { AppError, type ValidationIssue } from '../errors.js';
import { VOICE_UNSUPPORTED, type AgentConfig } from './agent.schemas.js';
import { reasoningEffortIssue } from './reasoning-effort-rule.js';

/**
 * Settings the API accepts (spec 2.1, 2.5) whose behaviour the runtime does not have yet. Storing them and running
 * the agent without them would be a broken promise (a memory that remembers nothing, a plan never made), so a
 * configuration that turns one on is refused with 422 until it acts. The defaults, and every value that describes
 * what the runtime does anyway, stay accepted. Remove a row in the change that makes its setting act.
 */
interface UnsupportedSetting {
  loc: (string | number)[];
  /** True when the configuration asks for the missing behaviour. */
  asks(cfg: AgentConfig): boolean;
  msg: string;
}

/** learning and agentic_culture: agno features (a learning machine, a culture shared across agents) with no defined meaning here yet; see docs/memory.md. */
const MEMORY = 'not supported yet (the memory settings that act are listed in docs/memory.md)';

function agnoFlag(name: keyof AgentConfig['agno_settings'], msg: string): UnsupportedSetting {
  return { loc: ['body', 'agno_settings', name], asks: (c) => c.agno_settings?.[name] === true, msg: `${name}: ${msg}` };
}

function flag(name: keyof AgentConfig, msg: string): UnsupportedSetting {
  return { loc: ['body', name], asks: (c) => c[name] === true, msg: `${name}: ${msg}` };
}

export const UNSUPPORTED_SETTINGS: readonly UnsupportedSetting[] = [
  { loc: ['body', 'output_format'], asks: (c) => c.output_format === 'voice', msg: VOICE_UNSUPPORTED },
  { loc: ['body', 'deployment_type'], asks: (c) => c.deployment_type === 'container', msg: "deployment_type 'container' is not supported: every agent runs in this service's workers (serverless)" },
  flag('using_nemo', 'NeMo guardrails are not supported'),
  flag('use_agent_gateway', 'an agent gateway is not supported'),
  flag('use_dynamic_tools', 'dynamic tool discovery is not supported yet'),
  flag('is_autonomous', 'autonomous mode is not supported yet'),
  flag('is_omni', 'omni mode is not supported yet'),
  agnoFlag('learning', MEMORY),
  agnoFlag('agentic_culture', MEMORY),
  {
    loc: ['body', 'agno_settings', 'coordinate_mode'],
    asks: (c) => c.agno_settings?.coordinate_mode === false,
    msg: 'coordinate_mode: only coordinate mode is supported (a manager calls its sub-agents as tools and writes the answer)',
  },
  {
    loc: ['body', 'connectivity_details'],
    asks: (c) => c.type !== 'a2a' && c.type !== 'curl' && !!c.connectivity_details && Object.keys(c.connectivity_details).length > 0,
    msg: "connectivity_details is not supported on this type: only 'a2a' and 'curl' agents call a remote endpoint (leave it empty)",
  },
  {
    loc: ['body', 'task_level_strategies', 'agentic_context_enabled'],
    asks: (c) => c.task_level_strategies?.agentic_context_enabled === true,
    msg: `agentic_context_enabled: ${MEMORY}`,
  },
];

/** Every unsupported setting the configuration turns on, as one 422 (a caller fixes them all in one round). */
export function refuseUnsupportedSettings(cfg: AgentConfig): void {
  const issues: ValidationIssue[] = UNSUPPORTED_SETTINGS.filter((s) => s.asks(cfg)).map((s) => ({
    loc: s.loc,
    msg: `Value error, ${s.msg}`,
    type: 'value_error',
  }));
  const effort = reasoningEffortIssue(cfg);
  if (effort) issues.push(effort);
  if (issues.length > 0) throw AppError.validation(issues);
}
