import { AppError } from '../errors.js';
import { isoOrNull, isoTime, type Clock } from '../lib/clock.js';
import { pageOf, type Page } from '../http/router.js';
import { newApiKey, type OrgsService } from '../orgs/orgs.service.js';
import type { ApiKeyInfo, OrgsRepository } from '../orgs/orgs.repository.js';
import { ownerOf, type Principal } from './principal.js';
import type { KeyRole } from './roles.js';

export interface ApiKeyView {
  id: string;
  name: string | null;
  role: KeyRole;
  /** `api_key:<id>` or `jwt:<sub>` of the creator; null for keys made with the CLI. */
  created_by: string | null;
  created_at: string;
  revoked_at: string | null;
  /** Revoked keys stay listed (an audit trail) but no longer authenticate. */
  active: boolean;
}

/**
 * API key management (`/v1/api_keys`, admin only, see the router's role): list without secrets, create (the key is
 * shown once, only its hash is kept), revoke. A revocation is seen by every process at the next request: key rows are
 * cached exactly against Db.configVersion (PostgreSQL: the config notification of migration 0011).
 */
export class ApiKeysService {
  constructor(
    private readonly repo: OrgsRepository,
    private readonly orgs: OrgsService,
    private readonly clock: Clock,
  ) {}

  async list(organizationId: string, page: number, perPage: number): Promise<Page<ApiKeyView>> {
    const { rows, total } = await this.repo.listKeys(organizationId, (page - 1) * perPage, perPage);
    return pageOf(rows.map(view), total, page, perPage);
  }

  /** `creator`: the principal creating it through the API; absent for the CLI. */
  async create(organizationId: string, input: { name?: string | null; role: KeyRole }, creator?: Principal): Promise<ApiKeyView & { key: string }> {
    const key = newApiKey();
    const id = await this.orgs.registerKey(organizationId, key, input.name ?? null, input.role, creator ? ownerOf(creator) : null);
    const info = await this.repo.findKey(organizationId, id);
    if (!info) throw AppError.notFound('API key');
    return { ...view(info), key };
  }

  async revoke(organizationId: string, id: string): Promise<ApiKeyView> {
    const org = organizationId;
    if (!(await this.repo.findKey(org, id))) throw AppError.notFound('API key');
    if (!(await this.repo.revokeKey(org, id, this.clock.now()))) {
      throw new AppError('conflict', "This is the organization's last active admin key; create another admin key first");
    }
    return view((await this.repo.findKey(org, id))!);
  }
}

function view(k: ApiKeyInfo): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    role: k.role,
    created_by: k.createdBy,
    created_at: isoTime(k.createdAt),
    revoked_at: isoOrNull(k.revokedAt),
    active: k.revokedAt === null,
  };
}
