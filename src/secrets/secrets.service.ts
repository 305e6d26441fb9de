import { AppError } from '../errors.js';
import { isoTime, type Clock } from '../lib/clock.js';
import type { SecretBox } from '../lib/secret-box.js';
import { pageOf, type Page } from '../http/router.js';
import type { SecretsRepository } from './secrets.repository.js';

export interface SecretView {
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * Organization secrets (docs/contract.md#llm-credentials): `llm_credentials_key` names one. Values are sealed with the
 * master key and never returned by the API; `reveal` is for the runtime's credential resolution only.
 */
export class SecretsService {
  constructor(private readonly repo: SecretsRepository, private readonly box: SecretBox, private readonly clock: Clock) {}

  async put(organizationId: string, name: string, value: string, description: string | null | undefined): Promise<{ secret: SecretView; created: boolean }> {
    const now = this.clock.now();
    const created = await this.repo.upsert(organizationId, name, this.box.seal(value), description ?? null, now);
    const row = await this.repo.find(organizationId, name);
    if (!row) throw AppError.notFound('Secret');
    return { secret: view(row), created };
  }

  async list(organizationId: string, page: number, perPage: number): Promise<Page<SecretView>> {
    const { rows, total } = await this.repo.list(organizationId, (page - 1) * perPage, perPage);
    return pageOf(rows.map(view), total, page, perPage);
  }

  async get(organizationId: string, name: string): Promise<SecretView> {
    const row = await this.repo.find(organizationId, name);
    if (!row) throw AppError.notFound('Secret');
    return view(row);
  }

  async delete(organizationId: string, name: string): Promise<void> {
    if (!(await this.repo.delete(organizationId, name))) throw AppError.notFound('Secret');
  }

  /** The plain value, or undefined when the organization has no such secret (or it cannot be opened). */
  async reveal(organizationId: string, name: string): Promise<string | undefined> {
    const row = await this.repo.find(organizationId, name);
    if (!row) return undefined;
    try {
      return this.box.open(row.sealedValue);
    } catch {
      return undefined;
    }
  }
}

function view(r: { name: string; description: string | null; createdAt: number; updatedAt: number }): SecretView {
  return { name: r.name, description: r.description, created_at: isoTime(r.createdAt), updated_at: isoTime(r.updatedAt) };
}
