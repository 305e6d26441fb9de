import { isUniqueViolation } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { BUILTIN_SKILL_NAMES, BUILTIN_SKILLS } from './builtin-skills.js';
import type { SkillsRepository } from './skills.repository.js';

export interface Skill {
  name: string;
  description: string;
  instructions: string;
  source: 'builtin' | 'organization';
  createdAt: number | null;
}

/**
 * The skills catalog: built-in skills (code, the same for everyone) followed by the organization's own, which
 * cannot take a built-in's name. Attached to agents as `skill` tool entries.
 */
export class SkillsService {
  constructor(
    private readonly repo: SkillsRepository,
    private readonly clock: Clock,
  ) {}

  async list(organizationId: string, page: number, perPage: number): Promise<{ items: Skill[]; total: number }> {
    const start = (page - 1) * perPage;
    const builtins = BUILTIN_SKILLS.slice(start, start + perPage).map(builtin);
    const orgOffset = Math.max(0, start - BUILTIN_SKILLS.length);
    const [orgTotal, org] = await Promise.all([
      this.repo.count(organizationId),
      this.repo.list(organizationId, orgOffset, perPage - builtins.length),
    ]);
    return { items: [...builtins, ...org.map(organization)], total: BUILTIN_SKILLS.length + orgTotal };
  }

  async get(organizationId: string, name: string): Promise<Skill> {
    const s = await this.find(organizationId, name);
    if (!s) throw AppError.notFound('Skill');
    return s;
  }

  async find(organizationId: string, name: string): Promise<Skill | undefined> {
    const b = BUILTIN_SKILLS.find((s) => s.name === name);
    if (b) return builtin(b);
    const o = await this.repo.find(organizationId, name);
    return o && organization(o);
  }

  /** The skills among `names` that exist for the organization, in the order asked. */
  async findMany(organizationId: string, names: string[]): Promise<Skill[]> {
    const unique = [...new Set(names)];
    const org = await this.repo.findMany(
      organizationId,
      unique.filter((n) => !BUILTIN_SKILL_NAMES.has(n)),
    );
    const byName = new Map<string, Skill>(org.map((o) => [o.name, organization(o)]));
    for (const b of BUILTIN_SKILLS) if (unique.includes(b.name)) byName.set(b.name, builtin(b));
    return unique.map((n) => byName.get(n)).filter((s): s is Skill => !!s);
  }

  async create(organizationId: string, input: { name: string; description: string; instructions: string }): Promise<Skill> {
    if (BUILTIN_SKILL_NAMES.has(input.name)) {
      throw AppError.invalid(['body', 'name'], `'${input.name}' is the name of a built-in skill`);
    }
    const now = this.clock.now();
    const record = { organizationId, ...input, createdAt: now, updatedAt: now };
    try {
      await this.repo.insert(record);
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('conflict', `Skill '${input.name}' already exists`);
      throw e;
    }
    return organization(record);
  }

  async delete(organizationId: string, name: string): Promise<void> {
    if (BUILTIN_SKILL_NAMES.has(name)) throw new AppError('conflict', 'Built-in skills cannot be deleted');
    if (!(await this.repo.delete(organizationId, name))) throw AppError.notFound('Skill');
  }
}

function builtin(s: { name: string; description: string; instructions: string }): Skill {
  return { ...s, source: 'builtin', createdAt: null };
}

function organization(s: { name: string; description: string; instructions: string; createdAt: number }): Skill {
  return { name: s.name, description: s.description, instructions: s.instructions, source: 'organization', createdAt: s.createdAt };
}
