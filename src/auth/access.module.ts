import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { SafeFetch } from '../net/index.js';
import { OrgsRepository } from '../orgs/orgs.repository.js';
import { OrgsService } from '../orgs/orgs.service.js';
import { ApiKeysService } from './api-keys.service.js';
import { AuthService } from './auth.service.js';
import { PreAuthService } from './pre-auth.service.js';
import { RateBucketsRepository } from './rate-buckets.repository.js';
import { RateLimiter, RateLimits } from './rate-limiter.js';

export interface AccessModule {
  orgs: OrgsService;
  auth: AuthService;
  apiKeys: ApiKeysService;
  rateLimits: RateLimits;
  /** OIDC pre-auth: a rule on agent configurations and a check on every invocation (docs/access.md). */
  preAuth: PreAuthService;
}

/** Organizations and authentication (issue 24): keys, JWTs, rate limits, end-user pre-auth. */
export function createAccessModule(d: { db: Db; config: Config; clock: Clock; log: Logger; safeFetch: SafeFetch }): AccessModule {
  const orgsRepo = new OrgsRepository(d.db);
  const orgs = new OrgsService(orgsRepo, d.clock);
  const { lease, ...limits } = d.config.rateLimits;
  return {
    orgs,
    auth: new AuthService(orgsRepo, d.config.jwt),
    apiKeys: new ApiKeysService(orgsRepo, orgs, d.clock),
    rateLimits: new RateLimits(new RateLimiter(new RateBucketsRepository(d.db), d.clock, lease, d.log), limits),
    preAuth: new PreAuthService(d.config.oidcPreAuth, d.safeFetch, d.clock),
  };
}
