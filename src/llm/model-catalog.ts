import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The model catalog (src/llm/model-catalog.json): per provider its display name, whether it needs an API key, its
 * default model and its models. `replaced_by` marks a deprecated model and names its successor: requests for it are
 * substituted (spec 2.1 `model_name`, docs/contract.md#model-catalog). Editing the JSON is the whole procedure for
 * adding models.
 */

/** Spec 2.2 LLMModelProvider, in the specification's order. */
export const LLM_MODEL_PROVIDERS = [
  'openai',
  'nim',
  'amazon_bedrock',
  'azure_ai_foundary',
  'huggingFace',
  'friendlyAI',
  'anthropic',
  'gemini',
  'fireworks',
  'google_ai_studio',
  'helicone',
  'bytedance',
  'tzafon_lightcone',
  'cerebras',
  'open_router',
  'nebius',
  'cloudflare_ai_gw',
  'z_ai',
] as const;
export type LLMModelProvider = (typeof LLM_MODEL_PROVIDERS)[number];

/**
 * What a model takes for each non-default `llm_reasoning_effort` (docs/decisions.md#reasoning-effort): a thinking
 * budget in tokens (0 turns thinking off) for providers whose reasoning is a budget, the provider's own effort name
 * for those that have levels. A value left out is refused for that model; `medium` is never listed (it is the
 * provider's default). Which kind a provider takes is its adapter's (llm/reasoning-effort.ts checks it on load).
 */
const EffortValue = z.union([z.number().int().min(0), z.string().min(1)]).optional();
const CatalogReasoning = z.strictObject({ low: EffortValue, high: EffortValue, xhigh: EffortValue });
export type CatalogReasoning = z.infer<typeof CatalogReasoning>;

/** A model as `GET /v1/misc/llm_providers/{p}/models` shows it. */
export const CatalogModel = z.strictObject({
  model_id: z.string().min(1),
  display_name: z.string().min(1),
  tier: z.enum(['premium', 'standard', 'economy']),
  description: z.string(),
  replaced_by: z.string().nullable(),
});
export type CatalogModel = z.infer<typeof CatalogModel>;

/** A model as the catalog file holds it: what the API shows, and what the runtime needs to know of it. */
const CatalogEntry = CatalogModel.extend({ reasoning: CatalogReasoning.optional() });
export type CatalogEntry = z.infer<typeof CatalogEntry>;

const CatalogProvider = z.strictObject({
  name: z.string().min(1),
  requires_api_key: z.boolean(),
  default_model: z.string().min(1),
  models: z.array(CatalogEntry).min(1),
});
type CatalogProvider = z.infer<typeof CatalogProvider>;

export const ModelCatalogSchema = z.record(z.enum(LLM_MODEL_PROVIDERS), CatalogProvider);
export type ModelCatalog = Record<LLMModelProvider, CatalogProvider>;

/** Checks what a schema cannot: every provider present, defaults current, successors present and chains finite. */
export function checkCatalog(catalog: ModelCatalog): string[] {
  const problems: string[] = [];
  for (const p of LLM_MODEL_PROVIDERS) {
    const entry = catalog[p];
    if (!entry) {
      problems.push(`${p}: missing`);
      continue;
    }
    const byId = new Map(entry.models.map((m) => [m.model_id, m]));
    if (byId.size !== entry.models.length) problems.push(`${p}: duplicate model ids`);
    const def = byId.get(entry.default_model);
    if (!def) problems.push(`${p}: default ${entry.default_model} is not listed`);
    else if (def.replaced_by) problems.push(`${p}: default ${entry.default_model} is deprecated`);
    for (const m of entry.models) {
      const seen = new Set<string>();
      let cur: CatalogEntry | undefined = m;
      while (cur?.replaced_by) {
        if (seen.has(cur.model_id)) {
          problems.push(`${p}: replacement cycle at ${m.model_id}`);
          break;
        }
        seen.add(cur.model_id);
        const next = byId.get(cur.replaced_by);
        if (!next) problems.push(`${p}: ${cur.model_id} is replaced by unknown ${cur.replaced_by}`);
        cur = next;
      }
    }
  }
  return problems;
}

function load(): ModelCatalog {
  const raw = JSON.parse(readFileSync(new URL('./model-catalog.json', import.meta.url), 'utf8'));
  const catalog = ModelCatalogSchema.parse(raw) as ModelCatalog;
  const problems = checkCatalog(catalog);
  if (problems.length) throw new Error(`model-catalog.json is inconsistent: ${problems.join('; ')}`);
  return catalog;
}

export const MODEL_CATALOG: Readonly<ModelCatalog> = load();

export function isProvider(p: string): p is LLMModelProvider {
  return (LLM_MODEL_PROVIDERS as readonly string[]).includes(p);
}

/** The provider's default model (always a current one). */
export function defaultModel(provider: LLMModelProvider): string {
  return MODEL_CATALOG[provider].default_model;
}

/**
 * The provider of an agent that names none: the create schema's default (docs/contract.md#agent-create), the
 * agents service's and the runtime's. The one place it is set.
 */
export const DEFAULT_MODEL_PROVIDER: LLMModelProvider = 'anthropic';

/**
 * The provider and model an agent runs on: the default provider when it names none, then `resolveModel`. The one
 * place an agent's model is chosen: at create and PATCH (the stored name) and at each run (a model deprecated since).
 */
export function chooseModel(provider: LLMModelProvider | null | undefined, name: string | null | undefined): { provider: LLMModelProvider; modelName: string } {
  const p = provider ?? DEFAULT_MODEL_PROVIDER;
  // Surrounding blanks are never part of a model id (a pasted name): stored and run trimmed, blank meaning the default.
  return { provider: p, modelName: resolveModel(p, name?.trim() || null) };
}

/**
 * The model actually used for a request: deprecated models follow `replaced_by` to the current successor;
 * a missing name gives the provider default; names not in the catalog (custom deployments, `llm_api_base`
 * endpoints, new releases) are kept as they are.
 */
export function resolveModel(provider: LLMModelProvider, name: string | null | undefined): string {
  if (!name) return defaultModel(provider);
  const models = MODEL_CATALOG[provider].models;
  let current = name;
  for (let hops = 0; hops < models.length; hops++) {
    const m = models.find((x) => x.model_id === current);
    if (!m?.replaced_by) return current;
    current = m.replaced_by;
  }
  return current;
}

/** The catalog entry of a model the provider runs under this exact name (after `resolveModel`); undefined when unlisted. */
export function catalogModel(provider: LLMModelProvider, modelName: string): CatalogEntry | undefined {
  return MODEL_CATALOG[provider].models.find((m) => m.model_id === modelName);
}

/** `GET /v1/misc/llm_providers` */
export function listProviders(): { internal_identifier: LLMModelProvider; name: string; requires_api_key: boolean }[] {
  return LLM_MODEL_PROVIDERS.map((p) => ({ internal_identifier: p, name: MODEL_CATALOG[p].name, requires_api_key: MODEL_CATALOG[p].requires_api_key }));
}

/** `GET /v1/misc/llm_providers/{p}/models`; undefined for an unknown provider. */
export function listModels(provider: string): CatalogModel[] | undefined {
  if (!isProvider(provider)) return undefined;
  return MODEL_CATALOG[provider].models.map(({ reasoning: _internal, ...m }) => m);
}
