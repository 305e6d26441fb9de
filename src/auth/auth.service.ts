import { jwtVerify, type JWTVerifyGetKey } from 'jose';
import { AppError } from '../errors.js';
import { constantTimeEqualHex, sha256Hex } from '../lib/secret-box.js';
import type { OrgsRepository } from '../orgs/orgs.repository.js';
import { keyLookup } from '../orgs/orgs.service.js';
import { issuerUnavailable, remoteKeySet } from './issuer-keys.js';
import type { Principal } from './principal.js';
import { isRole, type KeyRole } from './roles.js';

export interface JwtSettings {
  issuer?: string;
  audience?: string;
  jwksUrl: string;
  orgClaim: string;
  /** The claim that names the caller's role (admin, member, read-only), and the role when the token has none. */
  roleClaim: string;
  defaultRole: KeyRole;
}

export class AuthService {
  private readonly jwks?: JWTVerifyGetKey;

  constructor(
    private readonly orgs: OrgsRepository,
    private readonly jwt?: JwtSettings,
  ) {
    // The operator's issuer, not a tenant's URL: fetched directly, not through the egress policy.
    if (jwt) this.jwks = remoteKeySet(jwt.jwksUrl, fetch);
  }

  /** 401 when nothing is presented, 403 when what is presented is wrong. */
  async authenticate(creds: { apiKey?: string; bearer?: string }): Promise<Principal> {
    if (creds.apiKey) return this.byApiKey(creds.apiKey);
    if (creds.bearer) return this.byJwt(creds.bearer);
    throw new AppError('unauthenticated', 'API key not specified');
  }

  /** The key's row is cached exactly (a revoked key is refused from the next request); its hash is checked every time. */
  async byApiKey(key: string): Promise<Principal> {
    const row = await this.orgs.findKeyByLookup(keyLookup(key));
    if (!row || row.revokedAt !== null || !constantTimeEqualHex(row.keyHash, sha256Hex(key))) {
      throw new AppError('forbidden', 'Invalid API key');
    }
    return { organizationId: row.organizationId, kind: 'api_key', subject: row.id, role: row.role };
  }

  private async byJwt(token: string): Promise<Principal> {
    if (!this.jwt || !this.jwks) throw new AppError('forbidden', 'Invalid API key');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, { issuer: this.jwt.issuer, audience: this.jwt.audience }));
    } catch (e) {
      // An issuer whose keys cannot be read is not the caller's fault: 503, not 403.
      throw issuerUnavailable(e, 'JWT issuer') ?? new AppError('forbidden', 'Invalid API key');
    }
    const claim = payload[this.jwt.orgClaim];
    if (typeof claim !== 'string' || !claim) throw new AppError('forbidden', 'Invalid API key');
    // The claim may carry the organization id or its name.
    const org = (await this.orgs.findOrgById(claim)) ?? (await this.orgs.findOrgByName(claim));
    if (!org) throw new AppError('forbidden', 'Invalid API key');
    // A role claim that names no role is refused rather than guessed: the token says something we do not understand.
    const roleClaim = payload[this.jwt.roleClaim];
    if (roleClaim !== undefined && !isRole(roleClaim)) throw new AppError('forbidden', 'Invalid API key');
    return { organizationId: org.id, kind: 'jwt', subject: String(payload.sub ?? 'jwt'), role: roleClaim ?? this.jwt.defaultRole };
  }
}
