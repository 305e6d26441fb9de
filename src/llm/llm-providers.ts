import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel, streamText } from 'ai';
import { withDirectChatStream } from './chat-completions-stream.js';
import { anthropicSdk, googleSdk, openaiSdk } from './provider-sdks.js';

/** The SDK's per-call `providerOptions` (its type lives in a package that is not a direct dependency). */
export type ProviderOptions = NonNullable<Parameters<typeof streamText>[0]['providerOptions']>;
import type { LLMModelProvider } from './model-catalog.js';

/**
 * The LLM provider registry (docs/architecture.md rule 8): one adapter per LLMModelProvider value of the specification.
 * Providers without a dedicated `@ai-sdk/*` package speak the OpenAI Chat Completions protocol through
 * `@ai-sdk/openai-compatible`; so does every provider given a custom `llm_api_base` (docs/contract.md#llm-api-base).
 */

// The provider list is the model catalog's (agents domain): this registry must cover every value of it.
export { LLM_MODEL_PROVIDERS, type LLMModelProvider } from './model-catalog.js';
export { isProvider as isLlmProvider } from './model-catalog.js';

/** Everything needed to build a model for one call. The key is already resolved; nothing here reads process.env. */
export interface ModelRequest {
  modelName: string;
  apiKey: string;
  /** The agent's llm_api_base, when set. */
  baseUrl?: string;
  /** The agent's llm_extra_headers: sent with every call. */
  headers: Record<string, string>;
  /** Server environment (for account ids, regions, resource names that complete a default endpoint). */
  env: Readonly<Record<string, string>>;
  fetch: typeof globalThis.fetch;
}

export interface ProviderAdapter {
  /** Display name used in messages. */
  label: string;
  /** Server environment variables holding a key for this provider, in order of preference. */
  envKeys: readonly string[];
  /**
   * The provider's own endpoints (an llm_api_base equal to one of these after normalisation is not a custom
   * base): the only places a key from `envKeys` may be sent (see credentials.ts). Empty when the default endpoint
   * cannot be completed from `env`.
   */
  officialBases(env: Readonly<Record<string, string>>): string[];
  /**
   * Builds the model. Throws ProviderConfigError when the endpoint cannot be completed (e.g. a missing account id);
   * its message says what to set. A promise when the provider's own SDK package is loaded on first use
   * (provider-sdks.ts).
   */
  createModel(req: ModelRequest): LanguageModel | Promise<LanguageModel>;
  /** How the agent's llm_reasoning_effort reaches this provider (reasoning-effort.ts); absent: it has no equivalent. */
  reasoning?: ReasoningAdapter;
}

/**
 * A provider's equivalent of llm_reasoning_effort. The model catalog says, per model, which value each non-default
 * effort sends (`reasoning` in model-catalog.json); `kind` says how those values read.
 */
export interface ReasoningAdapter {
  /**
   * 'levels': the provider has named effort levels, `medium` among them, and the catalog value is the name sent;
   * `medium` is sent as it is. 'budget': a thinking budget in tokens (0 turns thinking off); `medium` sends nothing,
   * leaving the provider's own default.
   */
  kind: 'levels' | 'budget';
  /** The provider options that carry one value (a level name or a budget). */
  options(value: string | number): ProviderOptions;
  /** Whether it also goes to a custom llm_api_base (false when the base speaks another protocol). */
  customBase: boolean;
  /** The smallest budget above 0 the provider accepts. */
  minBudget?: number;
  /** Thinking forbids a forced tool choice (Anthropic accepts only `auto` and `none` with extended thinking). */
  thinkingForbidsForcedTools?: boolean;
}

/** A provider that cannot be called as configured. The message is meant for the task result. */
export class ProviderConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderConfigError';
  }
}

function compatible(name: string, baseURL: string, req: ModelRequest, authHeader?: 'api-key'): LanguageModel {
  const headers = authHeader ? { [authHeader]: req.apiKey, ...req.headers } : req.headers;
  const base = baseURL.replace(/\/+$/, '');
  const apiKey = authHeader ? undefined : req.apiKey;
  const sdkModel = createOpenAICompatible({
    name,
    baseURL: base,
    apiKey,
    headers,
    fetch: req.fetch,
    // Token usage in streamed answers is only sent when asked for.
    includeUsage: true,
  }).chatModel(req.modelName);
  // Streamed calls are read without the SDK's web streams (chat-completions-stream.ts); the headers are the ones
  // createOpenAICompatible sends.
  return withDirectChatStream(sdkModel, { providerName: name, baseURL: base, headers: { ...(apiKey && { Authorization: `Bearer ${apiKey}` }), ...headers }, fetch: req.fetch });
}

/** An OpenAI-compatible provider with a public default endpoint. */
function compatibleAdapter(name: string, label: string, defaultBase: string, envKeys: string[]): ProviderAdapter {
  return { label, envKeys, officialBases: () => [defaultBase], createModel: (req) => compatible(name, req.baseUrl ?? defaultBase, req) };
}

function requireEnv(req: ModelRequest, provider: string, names: string[], what: string): string {
  const v = firstEnv(req.env, names);
  if (v) return v;
  throw new ProviderConfigError(`${provider} needs ${what}: set llm_api_base on the agent, or ${names.join(' or ')} on the server`);
}

function firstEnv(env: Readonly<Record<string, string>>, names: string[]): string | undefined {
  for (const n of names) if (env[n]) return env[n];
  return undefined;
}

// Default endpoints completed from the server environment: one builder serves both createModel and officialBases,
// so the endpoint a server key may go to is exactly the one the adapter would call without llm_api_base.
const CLOUDFLARE_ACCOUNT = ['CLOUDFLARE_ACCOUNT_ID'];
const cloudflareBase = (account: string) => `https://api.cloudflare.com/client/v4/accounts/${encodeURIComponent(account)}/ai/v1`;
const bedrockBase = (env: Readonly<Record<string, string>>) =>
  `https://bedrock-runtime.${env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1'}.amazonaws.com/openai/v1`;
const AZURE_RESOURCE = ['AZURE_AI_FOUNDRY_RESOURCE_NAME', 'AZURE_RESOURCE_NAME'];
const azureBase = (resource: string) => `https://${resource}.services.ai.azure.com/openai/v1`;

// Gemini 2.5 thinking budgets: pro 128..32768 (never off), flash 0..24576, flash-lite 512..24576 (off by default).
const googleThinking: ReasoningAdapter = {
  kind: 'budget',
  options: (budget) => ({ google: { thinkingConfig: { thinkingBudget: Number(budget) } } }),
  customBase: true,
};

const google = (label: string): ProviderAdapter => ({
  label,
  reasoning: googleThinking,
  envKeys: ['GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  officialBases: () => ['https://generativelanguage.googleapis.com/v1beta'],
  // A custom base is taken as a proxy of the Gemini API itself (docs/contract.md#llm-api-base switches protocol only
  // for OpenAI-style providers).
  createModel: async (req) =>
    (await googleSdk.get()).createGoogleGenerativeAI({ apiKey: req.apiKey, baseURL: req.baseUrl?.replace(/\/+$/, ''), headers: req.headers, fetch: req.fetch })(
      req.modelName,
    ),
});

export const PROVIDER_ADAPTERS: Record<LLMModelProvider, ProviderAdapter> = {
  openai: {
    label: 'OpenAI',
    envKeys: ['OPENAI_API_KEY'],
    officialBases: () => ['https://api.openai.com/v1'],
    // The official endpoint gets the Responses API (the SDK default); a custom base gets Chat Completions, which is
    // what OpenAI-compatible servers implement.
    createModel: (req) =>
      req.baseUrl
        ? compatible('openai', req.baseUrl, req)
        : openaiSdk.get().then(({ createOpenAI }) => createOpenAI({ apiKey: req.apiKey, headers: req.headers, fetch: req.fetch }).responses(req.modelName)),
    // Only the official Responses endpoint: a custom base gets Chat Completions, whose servers may reject an unknown
    // reasoning_effort field.
    reasoning: { kind: 'levels', options: (level) => ({ openai: { reasoningEffort: String(level) } }), customBase: false },
  },
  anthropic: {
    label: 'Anthropic',
    envKeys: ['ANTHROPIC_API_KEY'],
    // The SDK itself takes the unversioned URL for the versioned one.
    officialBases: () => ['https://api.anthropic.com/v1', 'https://api.anthropic.com'],
    createModel: async (req) =>
      (await anthropicSdk.get()).createAnthropic({ apiKey: req.apiKey, baseURL: req.baseUrl?.replace(/\/+$/, ''), headers: req.headers, fetch: req.fetch })(req.modelName),
    // Extended thinking. The SDK sends max_tokens = the model's output limit (the run sets none), which must exceed the
    // budget: the catalog's budgets stay under each model's limit. It also drops temperature and top_k with thinking.
    reasoning: {
      kind: 'budget',
      options: (budget) => ({ anthropic: { thinking: budget ? { type: 'enabled', budgetTokens: Number(budget) } : { type: 'disabled' } } }),
      customBase: true,
      minBudget: 1024,
      thinkingForbidsForcedTools: true,
    },
  },
  gemini: google('Google Gemini'),
  google_ai_studio: google('Google AI Studio'),
  nim: compatibleAdapter('nim', 'NVIDIA NIM', 'https://integrate.api.nvidia.com/v1', ['NVIDIA_API_KEY', 'NIM_API_KEY']),
  nebius: compatibleAdapter('nebius', 'Nebius AI Studio', 'https://api.studio.nebius.com/v1', ['NEBIUS_API_KEY']),
  z_ai: compatibleAdapter('z_ai', 'Z.ai', 'https://api.z.ai/api/paas/v4', ['ZAI_API_KEY', 'Z_AI_API_KEY']),
  helicone: compatibleAdapter('helicone', 'Helicone AI Gateway', 'https://ai-gateway.helicone.ai/v1', ['HELICONE_API_KEY']),
  bytedance: compatibleAdapter('bytedance', 'ByteDance ModelArk', 'https://ark.ap-southeast.bytepluses.com/api/v3', [
    'ARK_API_KEY',
    'BYTEDANCE_API_KEY',
  ]),
  fireworks: compatibleAdapter('fireworks', 'Fireworks AI', 'https://api.fireworks.ai/inference/v1', ['FIREWORKS_API_KEY']),
  cerebras: compatibleAdapter('cerebras', 'Cerebras', 'https://api.cerebras.ai/v1', ['CEREBRAS_API_KEY']),
  open_router: compatibleAdapter('open_router', 'OpenRouter', 'https://openrouter.ai/api/v1', ['OPENROUTER_API_KEY', 'OPEN_ROUTER_API_KEY']),
  friendlyAI: compatibleAdapter('friendlyAI', 'FriendliAI', 'https://api.friendli.ai/serverless/v1', ['FRIENDLI_API_KEY', 'FRIENDLIAI_API_KEY', 'FRIENDLI_API_TOKEN']),
  huggingFace: compatibleAdapter('huggingFace', 'Hugging Face', 'https://router.huggingface.co/v1', [
    'HUGGINGFACE_API_KEY',
    'HF_API_TOKEN',
    'HUGGINGFACE_API_TOKEN',
    'HF_API_KEY',
  ]),
  tzafon_lightcone: compatibleAdapter('tzafon_lightcone', 'Tzafon Lightcone', 'https://api.lightcone.ai/v1', ['TZAFON_API_KEY', 'LIGHTCONE_API_KEY']),
  cloudflare_ai_gw: {
    label: 'Cloudflare AI Gateway',
    envKeys: ['CLOUDFLARE_API_TOKEN', 'CLOUDFLARE_API_KEY'],
    // A gateway URL (even on gateway.ai.cloudflare.com) names an account the caller chose: not official.
    officialBases: (env) => {
      const account = firstEnv(env, CLOUDFLARE_ACCOUNT);
      return account ? [cloudflareBase(account)] : [];
    },
    // Without a gateway URL (llm_api_base), the account's Workers AI OpenAI-compatible endpoint is used.
    createModel: (req) =>
      compatible('cloudflare_ai_gw', req.baseUrl ?? cloudflareBase(requireEnv(req, 'Cloudflare AI Gateway', CLOUDFLARE_ACCOUNT, 'an account id')), req),
  },
  amazon_bedrock: {
    label: 'Amazon Bedrock',
    // Bedrock API keys are bearer tokens accepted by its OpenAI-compatible Chat Completions endpoint.
    envKeys: ['AMAZON_BEDROCK_API_KEY', 'AWS_BEDROCK_API_KEY', 'BEDROCK_API_KEY'],
    officialBases: (env) => [bedrockBase(env)],
    createModel: (req) => compatible('amazon_bedrock', req.baseUrl ?? bedrockBase(req.env), req),
  },
  azure_ai_foundary: {
    label: 'Azure AI Foundry',
    envKeys: ['AZURE_AI_FOUNDRY_API_KEY', 'AZURE_AI_API_KEY', 'AZURE_OPENAI_API_KEY', 'AZURE_API_KEY'],
    officialBases: (env) => {
      const resource = firstEnv(env, AZURE_RESOURCE);
      return resource ? [azureBase(resource)] : [];
    },
    // The Foundry "v1" endpoint speaks Chat Completions and authenticates keys with the api-key header.
    createModel: (req) =>
      compatible('azure_ai_foundary', req.baseUrl ?? azureBase(requireEnv(req, 'Azure AI Foundry', AZURE_RESOURCE, 'a resource name')), req, 'api-key'),
  },
};
