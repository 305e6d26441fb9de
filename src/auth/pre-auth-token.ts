/**
 * Where a run keeps its verified end-user token (OIDC pre-auth): beside the invocation's `user_tokens`, sealed with
 * them in the task row (`sealed_user_tokens`), under a key no caller can set (TaskSubmissions drops it from what
 * callers send). The runtime takes it out again before tools see `user_tokens`.
 */
export const PRE_AUTH_TOKEN_KEY = '$oidc_pre_auth';

export function splitPreAuth(userTokens: Record<string, string> | undefined): { tokens: Record<string, string>; preAuthToken?: string } {
  if (!userTokens || !(PRE_AUTH_TOKEN_KEY in userTokens)) return { tokens: userTokens ?? {} };
  const { [PRE_AUTH_TOKEN_KEY]: preAuthToken, ...tokens } = userTokens;
  return { tokens, preAuthToken };
}

export function withPreAuth(tokens: Record<string, string>, preAuthToken: string | undefined): Record<string, string> {
  return preAuthToken ? { ...tokens, [PRE_AUTH_TOKEN_KEY]: preAuthToken } : tokens;
}

/**
 * The end-user token of an invocation: `x-user-token` (a `Bearer ` prefix is allowed), else `Authorization: Bearer`
 * when the caller's own credential travels elsewhere (an `x-api-key`, a public webhook URL), so Authorization is free.
 */
export function userTokenOf(headers: Record<string, string | string[] | undefined>, authorizationIsFree: boolean): string | undefined {
  const explicit = first(headers['x-user-token']);
  if (explicit) return explicit.replace(/^bearer\s+/i, '').trim() || undefined;
  if (!authorizationIsFree) return undefined;
  const authz = first(headers.authorization);
  return authz && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, '').trim() || undefined : undefined;
}

function first(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.trim() ? s.trim() : undefined;
}
