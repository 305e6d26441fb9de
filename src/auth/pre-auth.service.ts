import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AgentConfig } from '../agents/agent.schemas.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import type { SafeFetch } from '../net/index.js';
import type { TaskUser } from '../tasks/task.types.js';
import { discoverJwksUrl, issuerUnavailable, remoteKeySet } from './issuer-keys.js';
import { userTokenOf } from './pre-auth-token.js';

export interface PreAuthSettings {
  /** The OIDC issuer end-user tokens must come from (`iss`). */
  issuer: string;
  /** Its JWKS; default: `jwks_uri` of `<issuer>/.well-known/openid-configuration`. */
  jwksUrl?: string;
}

/** The agent settings this reads (spec 2.1), typed and complete (agents/agent-config.ts). */
export type PreAuthAgentFields = Pick<
  AgentConfig,
  'use_oidc_pre_auth' | 'pre_auth_audiences' | 'use_oidc_pre_auth_token_for_llm' | 'oidc_pre_auth_token_llm_audience' | 'oidc_pre_auth_token_mcp_audience'
>;

export interface VerifiedUser {
  /** The token as presented: the run hands it on (LLM credential, MCP OAuth token) when the agent says so. */
  token: string;
  /** The task's user, from the claims: sub, email, given_name, family_name. */
  user: TaskUser;
  claims: JWTPayload;
}

/** A JWT is a few hundred bytes to a few KB; anything far larger is not one worth verifying. */
const MAX_TOKEN_CHARS = 16_384;
const CLOCK_TOLERANCE_S = 30;

export const userTokenMissing = () => new AppError('unauthenticated', 'User token not specified');
const userTokenInvalid = (why?: string) => new AppError('forbidden', why ? `Invalid user token: ${why}` : 'Invalid user token');

/**
 * OIDC pre-auth (spec 2.1 `use_oidc_pre_auth`): every invocation of such an agent carries an end-user token, verified
 * here against the configured issuer's JWKS (fetched through the egress policy, cached by jose) with the agent's
 * `pre_auth_audiences`. One entry point for every transport: `verify(agent, headers)` (REST invoke, both webhook
 * forms, and any later inbound protocol) or `verifyToken(agent, token)` where the token was already taken out.
 */
export class PreAuthService {
  private jwks?: Promise<JWTVerifyGetKey>;

  constructor(
    private readonly settings: PreAuthSettings | undefined,
    private readonly fetch: SafeFetch,
    private readonly clock: Clock,
  ) {}

  /** Create and PATCH: refuses (422) a configuration an invocation could not honour. */
  checkConfig(cfg: PreAuthAgentFields): void {
    const on = cfg.use_oidc_pre_auth;
    const audiences = cfg.pre_auth_audiences;
    if (on && !this.settings) {
      throw AppError.invalid(['body', 'use_oidc_pre_auth'], 'use_oidc_pre_auth needs the server setting AGENTRY_OIDC_PRE_AUTH_ISSUER (the issuer of end-user tokens)');
    }
    if (on && audiences.length === 0) throw AppError.invalid(['body', 'pre_auth_audiences'], 'use_oidc_pre_auth needs at least one audience in pre_auth_audiences');
    if (!on && audiences.length > 0) throw AppError.invalid(['body', 'pre_auth_audiences'], 'pre_auth_audiences requires use_oidc_pre_auth');
    if (!on && cfg.oidc_pre_auth_token_mcp_audience !== null) {
      throw AppError.invalid(['body', 'oidc_pre_auth_token_mcp_audience'], 'oidc_pre_auth_token_mcp_audience requires use_oidc_pre_auth');
    }
    if (!cfg.use_oidc_pre_auth_token_for_llm && cfg.oidc_pre_auth_token_llm_audience !== null) {
      throw AppError.invalid(['body', 'oidc_pre_auth_token_llm_audience'], 'oidc_pre_auth_token_llm_audience requires use_oidc_pre_auth_token_for_llm');
    }
  }

  /** The verified end user of an invocation, or undefined when the agent does not use pre-auth. */
  verify(agent: PreAuthAgentFields, headers: Record<string, string | string[] | undefined>, opts: { authorizationIsFree: boolean }): Promise<VerifiedUser | undefined> {
    return this.verifyToken(agent, userTokenOf(headers, opts.authorizationIsFree));
  }

  /** 401 without a token, 403 with a wrong one, 503 when the issuer's keys cannot be fetched. */
  async verifyToken(agent: PreAuthAgentFields, token: string | undefined): Promise<VerifiedUser | undefined> {
    if (!agent.use_oidc_pre_auth) return undefined;
    if (!this.settings) throw new AppError('unavailable', 'OIDC pre-auth is not configured on this server (AGENTRY_OIDC_PRE_AUTH_ISSUER)', { retryAfter: 60 });
    if (!token) throw userTokenMissing();
    if (token.length > MAX_TOKEN_CHARS) throw userTokenInvalid();
    const audiences = agent.pre_auth_audiences;
    if (audiences.length === 0) throw userTokenInvalid();
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, await this.keys(), {
        issuer: this.settings.issuer,
        audience: audiences,
        currentDate: new Date(this.clock.now()),
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (e) {
      throw this.failure(e);
    }
    // The token is handed on as it is (no exchange): it must also be meant for where it goes.
    const aud = Array.isArray(claims.aud) ? claims.aud : claims.aud ? [claims.aud] : [];
    const handedTo = [agent.use_oidc_pre_auth_token_for_llm ? agent.oidc_pre_auth_token_llm_audience : null, agent.oidc_pre_auth_token_mcp_audience];
    for (const want of handedTo) {
      if (want !== null && !aud.includes(want)) throw userTokenInvalid(`not issued for the audience ${want}`);
    }
    return { token, user: userOf(claims), claims };
  }

  private keys(): Promise<JWTVerifyGetKey> {
    this.jwks ??= this.discover().catch((e) => {
      this.jwks = undefined;
      throw e;
    });
    return this.jwks;
  }

  private async discover(): Promise<JWTVerifyGetKey> {
    const s = this.settings!;
    return remoteKeySet(s.jwksUrl ?? (await discoverJwksUrl(s.issuer, this.fetch)), this.fetch);
  }

  private failure(e: unknown): AppError {
    if (e instanceof AppError) return e;
    const unavailable = issuerUnavailable(e, 'OIDC issuer');
    if (unavailable) return unavailable;
    if (e instanceof errors.JWTExpired) return userTokenInvalid('expired');
    if (e instanceof errors.JWTClaimValidationFailed) return userTokenInvalid(`the ${e.claim} claim does not match`);
    return userTokenInvalid();
  }
}

/** The claims that are present; the caller's own user fields fill only what the token does not say. */
function userOf(c: JWTPayload): TaskUser {
  const user: TaskUser = { id: c.sub };
  const set = (k: keyof TaskUser, v: unknown) => {
    if (typeof v === 'string' && v) user[k] = v;
  };
  set('email', c.email);
  set('first_name', c.given_name);
  set('last_name', c.family_name);
  return user;
}
