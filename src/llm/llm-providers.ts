import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel, streamText } from 'ai';
import { withDirectChatStream } from './chat-completions-stream.js';

/** The SDK's per-call `providerOptions` (its type lives in a package that is not a direct dependency). */
export type ProviderOptions = NonNullable<Parameters<typeof streamText>[0]['providerOptions']>;
import type { LLMModelProvider } from './model-catalog.js';

/**
 * The LLM provider registry (ARCHITECTURE rule 8): one adapter per LLMModelProvider value of the specification.
 * Providers without a dedicated `@ai-sdk/*` package speak the OpenAI Chat Completions protocol through
 * `@ai-sdk/openai-compatible`; so does every provider given a custom `llm_api_base` (CONTRACT section 5).
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
   * Builds the model. Throws ProviderConfigError when the endpoint cannot be completed (e.g. a missing account id);
   * its message says what to set.
   */
  createModel(req: ModelRequest): LanguageModel;
  /**
   * Provider options of every call (the SDK's `providerOptions`), e.g. the agent's llm_reasoning_effort where the
   * provider understands it. Absent: nothing provider-specific is sent.
   */
  callOptions?(o: { reasoningEffort?: string; customBase: boolean }): ProviderOptions | undefined;
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
  return { label, envKeys, createModel: (req) => compatible(name, req.baseUrl ?? defaultBase, req) };
}

function requireEnv(req: ModelRequest, provider: string, names: string[], what: string): string {
  for (const n of names) if (req.env[n]) return req.env[n];
  throw new ProviderConfigError(`${provider} needs ${what}: set llm_api_base on the agent, or ${names.join(' or ')} on the server`);
}

const google = (label: string): ProviderAdapter => ({
  label,
  envKeys: ['GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  // A custom base is taken as a proxy of the Gemini API itself (CONTRACT section 5 switches protocol only for
  // OpenAI-style providers).
  createModel: (req) =>
    createGoogleGenerativeAI({ apiKey: req.apiKey, baseURL: req.baseUrl?.replace(/\/+$/, ''), headers: req.headers, fetch: req.fetch })(
      req.modelName,
    ),
});

export const PROVIDER_ADAPTERS: Record<LLMModelProvider, ProviderAdapter> = {
  openai: {
    label: 'OpenAI',
    envKeys: ['OPENAI_API_KEY'],
    // The official endpoint gets the Responses API (the SDK default); a custom base gets Chat Completions, which is
    // what OpenAI-compatible servers implement.
    createModel: (req) =>
      req.baseUrl
        ? compatible('openai', req.baseUrl, req)
        : createOpenAI({ apiKey: req.apiKey, headers: req.headers, fetch: req.fetch }).responses(req.modelName),
    // Only the official Responses endpoint: the SDK sends the effort to reasoning models alone, whereas a compatible
    // server may reject an unknown reasoning_effort field.
    callOptions: ({ reasoningEffort, customBase }) => (reasoningEffort && !customBase ? { openai: { reasoningEffort } } : undefined),
  },
  anthropic: {
    label: 'Anthropic',
    envKeys: ['ANTHROPIC_API_KEY'],
    createModel: (req) =>
      createAnthropic({ apiKey: req.apiKey, baseURL: req.baseUrl?.replace(/\/+$/, ''), headers: req.headers, fetch: req.fetch })(req.modelName),
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
    // Without a gateway URL (llm_api_base), the account's Workers AI OpenAI-compatible endpoint is used.
    createModel: (req) =>
      compatible(
        'cloudflare_ai_gw',
        req.baseUrl ??
          `https://api.cloudflare.com/client/v4/accounts/${encodeURIComponent(requireEnv(req, 'Cloudflare AI Gateway', ['CLOUDFLARE_ACCOUNT_ID'], 'an account id'))}/ai/v1`,
        req,
      ),
  },
  amazon_bedrock: {
    label: 'Amazon Bedrock',
    // Bedrock API keys are bearer tokens accepted by its OpenAI-compatible Chat Completions endpoint.
    envKeys: ['AMAZON_BEDROCK_API_KEY', 'AWS_BEDROCK_API_KEY', 'BEDROCK_API_KEY'],
    createModel: (req) =>
      compatible(
        'amazon_bedrock',
        req.baseUrl ?? `https://bedrock-runtime.${req.env.AWS_REGION ?? req.env.AWS_DEFAULT_REGION ?? 'us-east-1'}.amazonaws.com/openai/v1`,
        req,
      ),
  },
  azure_ai_foundary: {
    label: 'Azure AI Foundry',
    envKeys: ['AZURE_AI_FOUNDRY_API_KEY', 'AZURE_AI_API_KEY', 'AZURE_OPENAI_API_KEY', 'AZURE_API_KEY'],
    // The Foundry "v1" endpoint speaks Chat Completions and authenticates keys with the api-key header.
    createModel: (req) =>
      compatible(
        'azure_ai_foundary',
        req.baseUrl ??
          `https://${requireEnv(req, 'Azure AI Foundry', ['AZURE_AI_FOUNDRY_RESOURCE_NAME', 'AZURE_RESOURCE_NAME'], 'a resource name')}.services.ai.azure.com/openai/v1`,
        req,
        'api-key',
      ),
  },
};
