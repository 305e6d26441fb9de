import { z } from 'zod';
import { isoOrNull } from '../lib/clock.js';
import type { Skill } from './skills.service.js';

/** Names are used in URLs, in the load_skill tool's enum and in `skill_name` of tool entries. */
export const SKILL_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const SkillCreateBody = z
  .object({
    name: z.string().regex(SKILL_NAME_RE),
    description: z.string().min(1).max(1000),
    instructions: z.string().min(1).max(100_000),
  })
  .strict();

export const SkillParams = z.object({ name: z.string().min(1).max(64) });

export function presentSkill(s: Skill) {
  return { name: s.name, description: s.description, instructions: s.instructions, source: s.source, created_at: isoOrNull(s.createdAt) };
}
