import { AppError } from '../../errors.js';
import type { ResolvedToolEntry, ToolEntryResolver } from '../../tools/tool-kinds.js';

export interface SkillLookup {
  find(organizationId: string, name: string): Promise<{ name: string } | undefined>;
}

/** `{type:"skill", skill_name}` -> a graph item of type `skill` whose item_id is the skill's name. */
export class SkillToolResolver implements ToolEntryResolver<{ skill_name: string }> {
  constructor(private readonly skills: SkillLookup) {}

  async resolve(organizationId: string, entry: { skill_name: string }, loc: (string | number)[]): Promise<ResolvedToolEntry> {
    const s = await this.skills.find(organizationId, entry.skill_name);
    if (!s) throw AppError.invalid([...loc, 'skill_name'], `skill '${entry.skill_name}' not found`);
    return { graph: [{ item_id: s.name, name: s.name, type: 'skill', sub_type: null, targets: [], settings: null, is_first: false }] };
  }
}
