import { PROVIDER_ADAPTERS, type LLMModelProvider } from './llm-providers.js';

/**
 * Whether an llm_api_base is the provider's own endpoint. Server-wide keys (OPENAI_API_KEY, ...) may only be sent
 * there: an llm_api_base is chosen by whoever configures the agent, and a key sent to it is a key handed to them.
 *
 * Compared after normalisation, strictly: https only (a key over plain http is readable on the way), no user
 * info, query or fragment, host case and default port folded by the URL parser, trailing slashes ignored.
 */
export function isOfficialBase(provider: LLMModelProvider, baseUrl: string, env: Readonly<Record<string, string>>): boolean {
  const given = normalise(baseUrl);
  if (!given) return false;
  return PROVIDER_ADAPTERS[provider].officialBases(env).some((b) => normalise(b) === given);
}

function normalise(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' || u.username || u.password || u.search || u.hash) return undefined;
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}
