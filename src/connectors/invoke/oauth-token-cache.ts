import type { Clock } from '../../lib/clock.js';
import type { SafeFetch } from '../../net/index.js';
import { readTextBounded } from '../../net/index.js';

/**
 * OAuth2 client-credentials tokens, cached per connection until shortly before they expire, with one in-flight
 * request per key (concurrent tool calls share it instead of stampeding the token endpoint).
 */

export interface ClientCredentials {
  token_url: string;
  client_id: string;
  client_secret: string;
  scopes: string[];
}

export class TokenEndpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenEndpointError';
  }
}

interface Cached {
  token: string;
  expiresAt: number;
}

/** Tokens are renewed this long before their stated expiry, so a call never leaves with a token about to lapse. */
const EARLY_RENEWAL_MS = 30_000;
/** When the endpoint does not say, a token is reused for this long. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;
/**
 * The longest a token is reused, whatever `expires_in` says (a day): the endpoint is the tenant's, and a huge or
 * mistaken lifetime (1e308 s) would otherwise keep one token for the life of the process.
 */
export const MAX_TOKEN_LIFETIME_MS = 24 * 60 * 60_000;
/**
 * Most bytes read from a token endpoint's answer (a token answer is a few hundred bytes). The endpoint is the tenant's
 * choice: read whole, an endless answer grew this process by gigabytes within one call's timeout.
 */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

export class OAuthTokenCache {
  private readonly tokens = new Map<string, Cached>();
  private readonly inflight = new Map<string, Promise<string>>();

  constructor(private readonly clock: Clock) {}

  async token(key: string, creds: ClientCredentials, fetchFn: SafeFetch, signal?: AbortSignal): Promise<string> {
    const cacheKey = `${key}\u0000${creds.token_url}\u0000${creds.client_id}\u0000${creds.scopes.join(' ')}`;
    const hit = this.tokens.get(cacheKey);
    if (hit && hit.expiresAt > this.clock.now()) return hit.token;
    let pending = this.inflight.get(cacheKey);
    if (!pending) {
      pending = this.request(creds, fetchFn, signal)
        .then((t) => {
          this.tokens.set(cacheKey, { token: t.token, expiresAt: this.clock.now() + Math.max(0, t.lifetimeMs - EARLY_RENEWAL_MS) });
          return t.token;
        })
        .finally(() => this.inflight.delete(cacheKey));
      this.inflight.set(cacheKey, pending);
    }
    return pending;
  }

  /** Forgets the connection's tokens (the upstream refused one, or the connection was deleted). */
  invalidate(key: string): void {
    for (const k of [...this.tokens.keys()]) if (k.startsWith(`${key}\u0000`)) this.tokens.delete(k);
  }

  private async request(creds: ClientCredentials, fetchFn: SafeFetch, signal?: AbortSignal): Promise<{ token: string; lifetimeMs: number }> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (creds.scopes.length) form.set('scope', creds.scopes.join(' '));
    // RFC 6749 prefers HTTP Basic client authentication; some servers only read the credentials from the body,
    // so a refusal is retried that way once.
    const basic = Buffer.from(`${encodeURIComponent(creds.client_id)}:${encodeURIComponent(creds.client_secret)}`).toString('base64');
    let res = await fetchFn(creds.token_url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
      body: form.toString(),
      signal,
    });
    if (res.status === 400 || res.status === 401) {
      await res.body?.cancel();
      const inBody = new URLSearchParams(form);
      inBody.set('client_id', creds.client_id);
      inBody.set('client_secret', creds.client_secret);
      res = await fetchFn(creds.token_url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: inBody.toString(),
        signal,
      });
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new TokenEndpointError(`OAuth2 token endpoint answered ${res.status}`);
    }
    const text = await readTextBounded(res, MAX_TOKEN_RESPONSE_BYTES, () => new TokenEndpointError(`OAuth2 token endpoint answered more than ${MAX_TOKEN_RESPONSE_BYTES / 1024} KiB`));
    let data: { access_token?: unknown; expires_in?: unknown };
    try {
      data = JSON.parse(text) as typeof data;
    } catch {
      throw new TokenEndpointError('OAuth2 token endpoint did not answer JSON');
    }
    if (typeof data.access_token !== 'string' || !data.access_token) throw new TokenEndpointError('OAuth2 token endpoint answered without access_token');
    const seconds = Number(data.expires_in);
    return { token: data.access_token, lifetimeMs: Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, MAX_TOKEN_LIFETIME_MS) : DEFAULT_LIFETIME_MS };
  }
}
