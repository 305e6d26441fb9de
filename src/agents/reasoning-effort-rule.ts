import type { ValidationIssue } from '../errors.js';
import { isExternalType } from '../external-agents/connectivity.js';
import { chooseModel } from '../llm/model-catalog.js';
import { DEFAULT_REASONING_EFFORT, forcesToolChoice, planReasoningEffort } from '../llm/reasoning-effort.js';
import type { AgentConfig } from './agent.schemas.js';

/**
 * `llm_reasoning_effort` that would be stored and not act is refused (422 at the field), on create and PATCH alike:
 * which values act for which provider, model and endpoint is llm/reasoning-effort.ts's decision. The default
 * (`medium`) and null are always accepted: they leave the provider's own default.
 */
export function reasoningEffortIssue(cfg: AgentConfig): ValidationIssue | undefined {
  const effort = cfg.llm_reasoning_effort;
  if (effort === null || effort === undefined || effort === DEFAULT_REASONING_EFFORT) return undefined;
  const issue = (why: string): ValidationIssue => ({
    loc: ['body', 'llm_reasoning_effort'],
    msg: `Value error, llm_reasoning_effort '${effort}' cannot act: ${why}; use '${DEFAULT_REASONING_EFFORT}' (the provider's default) or null`,
    type: 'value_error',
  });
  if (isExternalType(cfg.type)) return issue(`an agent of type '${cfg.type}' runs remotely and has no local model`);
  const { provider, modelName } = chooseModel(cfg.model_provider, cfg.model_name);
  const plan = planReasoningEffort({
    provider,
    modelName,
    effort,
    customBase: !!cfg.llm_api_base?.trim(),
    forcedToolChoice: forcesToolChoice(cfg),
  });
  return plan.acts ? undefined : issue(plan.why);
}
