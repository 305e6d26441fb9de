import { createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey } from 'jose';
import { AppError } from '../errors.js';
import { DocumentFetchError, documentFetch, seconds, urlForMessage } from '../net/document-fetch.js';

/**
 * The signing keys of a token issuer the operator configured (AGENTRY_JWT_JWKS_URL, AGENTRY_OIDC_PRE_AUTH_*), read
 * within bounds: an issuer that stalls, or answers without end, fails the verification it holds (503) instead of
 * holding it, or the process's memory. Both documents are a few KB (Google's JWKS ~2 KB, a discovery document ~5 KB).
 */
export const ISSUER_READ_TIMEOUT_MS = 5000;
export const ISSUER_DOCUMENT_MAX_BYTES = 1024 * 1024;

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const bounds = (what: string) => ({ what, timeoutMs: ISSUER_READ_TIMEOUT_MS, maxBytes: ISSUER_DOCUMENT_MAX_BYTES });

/** The key set at `url`, cached and refetched by jose (at most every 30 s, when a token names an unknown key id). */
export function remoteKeySet(url: string, fetch: Fetch): JWTVerifyGetKey {
  return createRemoteJWKSet(new URL(url), {
    // Ours ends the read first, with an error that names the URL; jose's is a backstop.
    timeoutDuration: ISSUER_READ_TIMEOUT_MS + 1000,
    [customFetch]: documentFetch(fetch, bounds('the JWKS')),
  });
}

/** `jwks_uri` of the issuer's OIDC discovery document (`<issuer>/.well-known/openid-configuration`). */
export async function discoverJwksUrl(issuer: string, fetch: Fetch): Promise<string> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const shown = `OIDC discovery at ${urlForMessage(url)}`;
  const res = await documentFetch(fetch, bounds('OIDC discovery'))(url);
  if (!res.ok) throw new DocumentFetchError(`${shown} answered ${res.status}`);
  let doc: { jwks_uri?: unknown };
  try {
    doc = (await res.json()) as typeof doc;
  } catch (e) {
    throw new DocumentFetchError(`${shown} did not answer JSON`, { cause: e });
  }
  if (typeof doc?.jwks_uri !== 'string') throw new DocumentFetchError(`${shown} has no jwks_uri`);
  return doc.jwks_uri;
}

/** What a caller is told when the issuer's keys cannot be read: the issuer's URL and the cause are the operator's. */
export const IDENTITY_PROVIDER_UNAVAILABLE = 'Identity provider unavailable; retry later';

/**
 * The 503 for a token that could not be verified because of its issuer (its keys unreadable), not the token; undefined
 * when the token is at fault. A bare JOSEError is jose's "the JWKS endpoint did not answer 200 with a key set". The
 * caller (public webhook callers among them) gets a generic detail; the reason, ours or jose's fixed text naming at
 * most the URL without its user info or query, goes to the service log as the error's operator detail.
 */
export function issuerUnavailable(e: unknown, issuer: string): AppError | undefined {
  let reason: string | undefined;
  if (e instanceof DocumentFetchError || (e instanceof errors.JOSEError && e.constructor === errors.JOSEError)) reason = e.message;
  else if (e instanceof errors.JWKSTimeout) reason = `the JWKS did not answer within ${seconds(ISSUER_READ_TIMEOUT_MS + 1000)}`;
  else if (e instanceof errors.JOSEError) return undefined;
  // Anything else is a bug of ours, not the issuer's words: its name only, its message may hold anything.
  reason ??= `unexpected ${e instanceof Error ? e.name : typeof e}`;
  return new AppError('unavailable', IDENTITY_PROVIDER_UNAVAILABLE, {
    retryAfter: 5,
    cause: e,
    operatorDetail: { message: `The ${issuer}'s keys could not be fetched; callers are answered 503`, fields: { issuer, reason } },
  });
}
