import type { AgentConfig } from '../agents/agent.schemas.js';
import { setBounded } from '../lib/bounded-map.js';
import type { LanguageModel } from 'ai';
import { CredentialResolver, type CredentialAgentFields, type CredentialSource } from './credentials.js';
import { isLlmProvider, PROVIDER_ADAPTERS, ProviderConfigError, type LLMModelProvider, type ProviderOptions } from './llm-providers.js';
import { chooseModel } from './model-catalog.js';
import { forcesToolChoice, reasoningOptions } from './reasoning-effort.js';
import { createRetryingFetch, DEFAULT_RETRY_POLICY, type RetryListener, type RetryPolicy } from './retrying-fetch.js';
import { boundedFetch } from '../net/bounded-response.js';
import { MAX_LLM_MESSAGE_BYTES } from './llm-limits.js';
import { DEFAULT_LLM_CALL_LIMITS, withCallLimits, withFirstByteDeadline, type LlmCallLimits } from './llm-call-limits.js';

/** The agent fields that choose and reach a model, typed as stored (agents/agent.schemas.ts). */
export type LlmAgentFields = CredentialAgentFields &
  Pick<AgentConfig, 'model_provider' | 'model_name' | 'llm_api_base' | 'llm_extra_headers' | 'llm_reasoning_effort'> &
  /** What decides whether the run forces tool choices, which some providers' thinking forbids (reasoning-effort.ts). */
  Partial<Pick<AgentConfig, 'enforce_deep_planning' | 'graph'>>;

export interface ResolvedModel {
  model: LanguageModel;
  provider: LLMModelProvider;
  modelName: string;
  credentialSource: CredentialSource;
  /** True when the call goes to the agent's llm_api_base (through the egress policy). */
  customBase: boolean;
  /** To pass as `providerOptions` on every call. */
  providerOptions?: ProviderOptions;
}

export interface LlmServiceDeps {
  credentials: CredentialResolver;
  /** Server environment, for account ids and regions that complete default endpoints. */
  env: Readonly<Record<string, string>>;
  /** Transport to the providers' public endpoints. */
  publicFetch: typeof globalThis.fetch;
  /** Transport to a user-configured llm_api_base: obeys the egress policy (docs/contract.md#egress). */
  egressFetch: typeof globalThis.fetch;
  retry?: RetryPolicy;
  /** Deadlines and answer size of one call (llm-call-limits.ts). */
  callLimits?: LlmCallLimits;
}

/** Distinct (provider, model, endpoint, key, headers) combinations kept built. */
const MODELS_MAX = 256;

/** Chooses provider, model, endpoint, headers and credentials for an agent, and builds the `ai` model. */
export class LlmService {
  /**
   * Built models, by everything that goes into building one. Building is not free: a provider model compiles
   * its response schemas (zod) on construction and first use, ~10% of a short run's CPU when done per run.
   */
  private readonly models = new Map<string, LanguageModel>();
  /**
   * A model is shared by concurrent runs, so whose retries to report is found from the call: by its abort signal,
   * which is each run's own (AsyncLocalStorage would do too, but on Node 20 it turns on promise hooks for the
   * whole process, a cost on every await).
   */
  private readonly retryListeners = new WeakMap<AbortSignal, RetryListener>();

  constructor(private readonly deps: LlmServiceDeps) {}

  /** Tells `onRetry` about each retried LLM call made with `signal` (one run's). */
  reportRetries(signal: AbortSignal, onRetry: RetryListener): void {
    this.retryListeners.set(signal, onRetry);
  }

  /** The provider and model name an agent runs on (before any credential is looked up). */
  identify(agent: LlmAgentFields): { provider: LLMModelProvider; modelName: string } {
    const raw = agent.model_provider;
    // A version stored with a provider since removed from the enum reads as it was stored.
    if (raw !== null && !isLlmProvider(raw)) throw new ProviderConfigError(`Unknown LLM provider "${String(raw)}"`);
    // The catalog follows replaced_by for deprecated models (stored before the deprecation) and gives the default when none is named.
    return chooseModel(raw, agent.model_name);
  }

  /** Throws MissingCredentialsError or ProviderConfigError with a message fit for the task result. */
  /** `userToken`: the end user's OIDC pre-auth token, the call's credential instead of the stored ones (`use_oidc_pre_auth_token_for_llm`). */
  async resolve(agent: LlmAgentFields, userToken?: string): Promise<ResolvedModel> {
    const { provider, modelName } = this.identify(agent);
    const baseUrl = agent.llm_api_base?.trim() || undefined;
    if (baseUrl && !/^https?:\/\//i.test(baseUrl)) throw new ProviderConfigError(`llm_api_base "${baseUrl}" is not an http(s) URL`);
    // The endpoint decides whether server-wide keys may be used (credentials.ts), so it is known first.
    const credential = userToken ? { apiKey: userToken, source: 'pre_auth_token' as const } : await this.deps.credentials.resolve(provider, agent, baseUrl);
    const headers = stringHeaders(agent.llm_extra_headers);
    const key = JSON.stringify([provider, modelName, baseUrl ?? null, credential.apiKey, headers]);
    let model = this.models.get(key);
    if (!model) {
      // A tenant's endpoint (llm_api_base) answers within a size limit; the official ones are not the tenant's.
      const limits = this.deps.callLimits ?? DEFAULT_LLM_CALL_LIMITS;
      // Each attempt waits for its response headers at most firstByteMs, and a late one is retried like a failed connection.
      const transport = withFirstByteDeadline(baseUrl ? boundedFetch(this.deps.egressFetch, MAX_LLM_MESSAGE_BYTES) : this.deps.publicFetch, limits.firstByteMs);
      const built = await PROVIDER_ADAPTERS[provider].createModel({
        modelName,
        apiKey: credential.apiKey,
        baseUrl,
        headers,
        env: this.deps.env,
        fetch: (input, init) => {
          const onRetry = init?.signal ? this.retryListeners.get(init.signal) : undefined;
          return createRetryingFetch(transport, this.deps.retry ?? DEFAULT_RETRY_POLICY, onRetry)(input, init);
        },
      });
      // The answer's silences, whole duration and size are bounded where its parts are read.
      model = withCallLimits(built, limits, (callers, call) => {
        const onRetry = this.retryListeners.get(callers);
        if (onRetry) this.retryListeners.set(call, onRetry);
      });
      setBounded(this.models, key, model, MODELS_MAX);
    }
    const providerOptions = reasoningOptions({
      provider,
      modelName,
      effort: agent.llm_reasoning_effort,
      customBase: baseUrl !== undefined,
      forcedToolChoice: forcesToolChoice(agent),
    });
    return { model, provider, modelName, credentialSource: credential.source, customBase: baseUrl !== undefined, providerOptions };
  }

  /**
   * The OpenAI endpoint for an agent's OpenAI-only calls (openai_moderation_enabled): an agent on `openai` uses its
   * own endpoint (llm_api_base or OpenAI's) and credential, resolved exactly as for its LLM calls; an agent on
   * another provider uses OpenAI's own endpoint with the server's OPENAI_API_KEY. null when there is no key.
   */
  async openaiEndpoint(agent: LlmAgentFields, signal?: AbortSignal): Promise<OpenAIEndpoint | null> {
    const { provider } = this.identify(agent);
    const official = PROVIDER_ADAPTERS.openai.officialBases(this.deps.env)[0]!;
    const retrying = (transport: typeof globalThis.fetch): typeof globalThis.fetch => {
      const onRetry = signal ? this.retryListeners.get(signal) : undefined;
      return createRetryingFetch(transport, this.deps.retry ?? DEFAULT_RETRY_POLICY, onRetry);
    };
    if (provider === 'openai') {
      const baseUrl = agent.llm_api_base?.trim() || undefined;
      const credential = await this.deps.credentials.resolve('openai', agent, baseUrl);
      const transport = baseUrl ? this.deps.egressFetch : this.deps.publicFetch;
      return { baseUrl: baseUrl ?? official, apiKey: credential.apiKey, headers: stringHeaders(agent.llm_extra_headers), fetch: retrying(transport) };
    }
    const key = PROVIDER_ADAPTERS.openai.envKeys.map((k) => this.deps.env[k]).find((v) => v);
    return key ? { baseUrl: official, apiKey: key, headers: {}, fetch: retrying(this.deps.publicFetch) } : null;
  }
}

/** Where an agent's OpenAI-only calls (the moderation endpoint) go, with what key, over which transport. */
export interface OpenAIEndpoint {
  baseUrl: string;
  apiKey: string;
  headers: Record<string, string>;
  /** The transport the LLM calls to the same endpoint use: egress-checked for a custom base, with the same retries. */
  fetch: typeof globalThis.fetch;
}

function stringHeaders(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw || typeof raw !== 'object') return out;
  for (const [k, v] of Object.entries(raw)) if (typeof v === 'string' || typeof v === 'number') out[k] = String(v);
  return out;
}
