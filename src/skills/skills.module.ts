import type { ToolResolverRegistry } from '../agents/tool-resolvers/index.js';
import { SkillToolResolver } from '../agents/tool-resolvers/skill.resolver.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Runtime } from '../runtime/runtime.js';
import { SkillContext, SkillToolProvider } from '../runtime/tools/skill.tools.js';
import { SkillsRepository } from './skills.repository.js';
import { SkillsService } from './skills.service.js';

/** Skills (issue 6): the service, the `skill` tool kind and the attached skills' context contributor. */
export function createSkillsModule(d: { db: Db; clock: Clock; toolResolvers: ToolResolverRegistry; runtime: Runtime }): { skills: SkillsService } {
  const skills = new SkillsService(new SkillsRepository(d.db), d.clock);
  d.toolResolvers.skill = new SkillToolResolver(skills);
  d.runtime.tools.register('skill', new SkillToolProvider(skills));
  d.runtime.context.register('skills', new SkillContext(skills));
  return { skills };
}
