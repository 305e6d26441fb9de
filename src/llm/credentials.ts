import type { SecretBox } from '../lib/secret-box.js';
import { PROVIDER_ADAPTERS, type LLMModelProvider } from './llm-providers.js';
import { isOfficialBase } from './official-endpoints.js';

/**
 * Credential resolution for a run (docs/contract.md#llm-credentials), first found:
 *   1. the agent's `llm_credentials` (stored sealed by the agents domain),
 *   2. the organization secret named by `llm_credentials_key`; a named secret that does not exist fails the run (the
 *      owner asked for their own account: falling through to 3 billed the operator's),
 *   3. the server environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...), only when the call goes to the provider's
 *      own endpoint (no llm_api_base, or the official one): the operator's key must never reach an endpoint the
 *      agent's author chose (issue 20). A custom endpoint without 1 or 2 fails the run; one that needs no key is
 *      given any placeholder value in llm_credentials, as before. Nor for an agent whose
 *      `llm_credentials_key_type` is `custom`: its author said the key is theirs, so a missing one fails the run
 *      rather than spending the operator's key (`xpander`, the default, allows the server's key).
 * The resolved key is never logged nor put in an event; only its source is.
 */

/** Reads an organization secret in clear (the secrets domain's SecretsService.reveal). */
export interface OrgSecretReader {
  reveal(organizationId: string, name: string): Promise<string | null | undefined>;
}

export type CredentialSource = 'agent' | 'organization_secret' | 'environment' | 'pre_auth_token';

export interface ResolvedCredential {
  apiKey: string;
  source: CredentialSource;
}

export interface CredentialAgentFields {
  organization_id: string;
  llm_credentials?: unknown;
  llm_credentials_key?: unknown;
  /** `custom`: the agent brings its own key (1 or 2 below), never the server's. */
  llm_credentials_key_type?: unknown;
}

export class MissingCredentialsError extends Error {
  constructor(
    readonly provider: LLMModelProvider,
    hint: string,
  ) {
    super(`No LLM credentials for provider "${provider}": ${hint}`);
    this.name = 'MissingCredentialsError';
  }
}

const SEALED = /^v\d+:/;

export class CredentialResolver {
  constructor(
    private readonly secretBox: SecretBox,
    private readonly env: Readonly<Record<string, string>>,
    /** Absent until the secrets domain exists; then org secrets are simply not a source. */
    private readonly secrets?: OrgSecretReader,
  ) {}

  /** `baseUrl`: the agent's llm_api_base (undefined: the provider's default endpoint). */
  async resolve(provider: LLMModelProvider, agent: CredentialAgentFields, baseUrl?: string): Promise<ResolvedCredential> {
    const own = this.fromAgent(agent.llm_credentials);
    if (own) return { apiKey: own, source: 'agent' };

    const keyName = typeof agent.llm_credentials_key === 'string' ? agent.llm_credentials_key.trim() : '';
    if (keyName) {
      const value = this.secrets ? await this.secrets.reveal(agent.organization_id, keyName) : undefined;
      if (value) return { apiKey: value, source: 'organization_secret' };
      // The owner asked for their own account by naming it: a missing (or deleted) secret fails the run rather than
      // billing the operator's key without a word.
      throw new MissingCredentialsError(
        provider,
        `the organization secret "${keyName}" named by llm_credentials_key does not exist, and the server's key is not used in its place: ` +
          `store it (PUT /v1/secrets/${keyName}), or clear llm_credentials_key to use the server's key`,
      );
    }

    const envKeys = PROVIDER_ADAPTERS[provider].envKeys;
    const custom = baseUrl !== undefined && !isOfficialBase(provider, baseUrl, this.env);
    const ownKeyOnly = agent.llm_credentials_key_type === 'custom';
    if (!custom && !ownKeyOnly) {
      for (const k of envKeys) {
        if (this.env[k]) return { apiKey: this.env[k], source: 'environment' };
      }
    }

    if (ownKeyOnly) {
      throw new MissingCredentialsError(
        provider,
        `llm_credentials_key_type is "custom", so the agent brings its own key and the server's ${envKeys.join(' / ')} ` +
          `is not used: set llm_credentials on the agent, or store an organization secret (PUT /v1/secrets/{name}) and name it in ` +
          `llm_credentials_key (or set llm_credentials_key_type to "xpander" to allow the server's key)`,
      );
    }
    if (custom) {
      throw new MissingCredentialsError(
        provider,
        `llm_api_base ${originOf(baseUrl!)} is not the provider's own endpoint, so the server's ${envKeys.join(' / ')} ` +
          `is not sent to it: set llm_credentials on the agent, or store an organization secret (PUT /v1/secrets/{name}) and name it ` +
          `in llm_credentials_key (an endpoint that needs no key accepts any placeholder value)`,
      );
    }
    throw new MissingCredentialsError(
      provider,
      `set llm_credentials on the agent, store an organization secret (PUT /v1/secrets/{name}) and name it in ` +
        `llm_credentials_key, or set ${envKeys.join(' or ')} in the server environment`,
    );
  }

  /**
   * The agents domain stores `llm_credentials` as `{name, description, value: {$sealed}}` and reveals it in
   * getRunnable; a sealed value, a sealed whole object, or a clear value are accepted too.
   */
  private fromAgent(raw: unknown): string | undefined {
    if (raw === null || raw === undefined) return undefined;
    if (typeof raw === 'string') {
      if (!SEALED.test(raw)) return raw || undefined;
      const opened = this.secretBox.open(raw);
      try {
        return this.fromAgent(JSON.parse(opened));
      } catch {
        return opened || undefined;
      }
    }
    if (typeof raw === 'object' && 'value' in raw) {
      let v = (raw as { value: unknown }).value;
      // Stored form of the agents domain (agent-secrets.ts) when the configuration was not revealed first.
      if (v && typeof v === 'object' && typeof (v as { $sealed?: unknown }).$sealed === 'string') v = (v as { $sealed: string }).$sealed;
      if (typeof v !== 'string' || !v || v === '********') return undefined;
      return SEALED.test(v) ? this.secretBox.open(v) || undefined : v;
    }
    return undefined;
  }
}

/** The endpoint as named in messages: scheme and host only (a path or user info may carry a token). */
function originOf(url: string): string {
  try {
    return `"${new URL(url).origin}"`;
  } catch {
    return '(not a URL)';
  }
}
