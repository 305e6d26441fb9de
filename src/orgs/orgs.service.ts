import { newId, randomToken } from '../lib/ids.js';
import { sha256Hex } from '../lib/secret-box.js';
import type { Clock } from '../lib/clock.js';
import type { Organization, OrgsRepository } from './orgs.repository.js';
import type { KeyRole } from '../auth/roles.js';

const KEY_PREFIX = 'agk_';

/** The indexed part of a key: enough to find its row, too little to use it. */
export function keyLookup(key: string): string {
  return sha256Hex('lookup:' + key).slice(0, 24);
}

/** A new random key: 256 bits after the prefix. */
export function newApiKey(): string {
  return KEY_PREFIX + randomToken(32);
}

export class OrgsService {
  constructor(private readonly repo: OrgsRepository, private readonly clock: Clock) {}

  ensureOrganization(name: string): Promise<Organization> {
    return this.repo.ensureOrg(newId(), name, this.clock.now());
  }

  getOrganization(id: string): Promise<Organization | undefined> {
    return this.repo.findOrgById(id);
  }

  findOrganizationByName(name: string): Promise<Organization | undefined> {
    return this.repo.findOrgByName(name);
  }

  /** Creates a key for the organization (creating it if needed), an admin key unless told. Only the hash is stored. */
  async createApiKey(orgName: string, keyName: string | null = null, role: KeyRole = 'admin'): Promise<{ key: string; id: string; organization: Organization }> {
    const organization = await this.ensureOrganization(orgName);
    const key = newApiKey();
    const id = await this.registerKey(organization.id, key, keyName, role);
    return { key, id, organization };
  }

  /** Registers a caller-chosen key (the bootstrap key) or a generated one. Idempotent on the key. */
  async registerKey(organizationId: string, key: string, keyName: string | null, role: KeyRole = 'admin', createdBy: string | null = null): Promise<string> {
    const id = newId();
    await this.repo.insertKey({ id, organizationId, lookup: keyLookup(key), keyHash: sha256Hex(key), name: keyName, now: this.clock.now(), role, createdBy });
    return id;
  }
}
