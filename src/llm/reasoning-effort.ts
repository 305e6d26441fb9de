import { PROVIDER_ADAPTERS, type LLMModelProvider, type ProviderOptions } from './llm-providers.js';
import { catalogModel, LLM_MODEL_PROVIDERS, MODEL_CATALOG } from './model-catalog.js';

/**
 * What an agent's `llm_reasoning_effort` does on its provider, model and endpoint (docs/decisions.md#reasoning-effort).
 * One decision serves both sides: agent create/PATCH refuses what cannot act (422), the run sends what acts.
 *
 * - null: nothing is sent.
 * - `medium` (the default of every agent): the provider's own default. A provider with named levels (OpenAI) gets
 *   `medium`, as before; a budget provider gets nothing, so no agent changes behaviour or cost.
 * - `low` / `high` / `xhigh`: the value the model catalog lists for the model, through the provider's adapter; refused
 *   for a provider without an equivalent, a model that does not list it, a model the catalog does not know, a custom
 *   endpoint that does not speak the provider's protocol, and thinking combined with a forced tool choice where the
 *   provider forbids that.
 */

export const DEFAULT_REASONING_EFFORT = 'medium';

export interface EffortTarget {
  provider: LLMModelProvider;
  /** As it runs (after the catalog's replacements). */
  modelName: string;
  effort: string | null | undefined;
  customBase: boolean;
  /** The agent forces tool choices (graph targets, enforce_deep_planning): see `forcesToolChoice`. */
  forcedToolChoice: boolean;
}

export type EffortPlan =
  | { acts: true; providerOptions?: ProviderOptions }
  /** `unlisted`: refused only because the catalog does not know the model. */
  | { acts: false; why: string; unlisted: boolean };

export function planReasoningEffort(t: EffortTarget): EffortPlan {
  const effort = t.effort ?? null;
  const adapter = PROVIDER_ADAPTERS[t.provider];
  const r = adapter.reasoning;
  const reaches = !!r && (!t.customBase || r.customBase);
  if (effort === null) return { acts: true };
  if (effort === DEFAULT_REASONING_EFFORT) return { acts: true, providerOptions: r && reaches && r.kind === 'levels' ? r.options(effort) : undefined };
  const refuse = (why: string, unlisted = false): EffortPlan => ({ acts: false, why, unlisted });
  if (!r) return refuse(`${adapter.label} has no reasoning effort setting`);
  if (!reaches) return refuse(`it is not sent to a custom llm_api_base, which speaks the OpenAI-compatible Chat Completions protocol (such servers may reject reasoning_effort)`);
  const model = catalogModel(t.provider, t.modelName);
  if (!model) return refuse(`model "${t.modelName}" is not in the model catalog, so whether it reasons is unknown (src/llm/model-catalog.json declares it per model)`, true);
  const value = model.reasoning?.[effort as 'low' | 'high' | 'xhigh'];
  if (value === undefined) {
    const takes = Object.keys(model.reasoning ?? {});
    return refuse(takes.length ? `model "${t.modelName}" takes ${[...takes, DEFAULT_REASONING_EFFORT].join(', ')} only` : `model "${t.modelName}" does not reason`);
  }
  if (r.thinkingForbidsForcedTools && Number(value) > 0 && t.forcedToolChoice) {
    return refuse(`${adapter.label}'s extended thinking cannot be combined with a forced tool choice, which graph targets and enforce_deep_planning use`);
  }
  return { acts: true, providerOptions: r.options(value) };
}

/**
 * The provider options a run sends. A refused effort (an agent stored before the refusal existed) runs without it,
 * except a model the catalog does not know on OpenAI's own endpoint, which keeps what it always got: the effort,
 * which the SDK passes to OpenAI's reasoning models only.
 */
export function reasoningOptions(t: EffortTarget): ProviderOptions | undefined {
  const plan = planReasoningEffort(t);
  if (plan.acts) return plan.providerOptions;
  const r = PROVIDER_ADAPTERS[t.provider].reasoning;
  return plan.unlisted && r?.kind === 'levels' && t.effort ? r.options(t.effort) : undefined;
}

/** Whether an agent's configuration makes the run force tool choices (runtime/graph-chain.ts targets, runtime/planning.ts). */
export function forcesToolChoice(cfg: { enforce_deep_planning?: boolean | null; graph?: readonly { targets?: unknown }[] | null }): boolean {
  return cfg.enforce_deep_planning === true || (cfg.graph ?? []).some((g) => Array.isArray(g.targets) && g.targets.length > 0);
}

/** Every catalog `reasoning` value must read as its provider's adapter says (checked on load, like the catalog). */
export function checkReasoningCatalog(): string[] {
  const problems: string[] = [];
  for (const p of LLM_MODEL_PROVIDERS) {
    const r = PROVIDER_ADAPTERS[p].reasoning;
    for (const m of MODEL_CATALOG[p].models) {
      for (const [effort, value] of Object.entries(m.reasoning ?? {})) {
        const at = `${p}/${m.model_id} ${effort}`;
        if (!r) problems.push(`${at}: ${p} has no reasoning adapter`);
        else if (r.kind === 'levels' && typeof value !== 'string') problems.push(`${at}: a level name is expected`);
        else if (r.kind === 'budget' && (typeof value !== 'number' || (value > 0 && value < (r.minBudget ?? 1)))) {
          problems.push(`${at}: a budget of 0 or at least ${r.minBudget ?? 1} tokens is expected`);
        }
      }
    }
  }
  return problems;
}

const problems = checkReasoningCatalog();
if (problems.length) throw new Error(`model-catalog.json reasoning is inconsistent: ${problems.join('; ')}`);
