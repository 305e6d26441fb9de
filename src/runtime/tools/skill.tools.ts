import type { Awaitable } from '../../lib/awaitable.js';
import type { RunContextAgent, RuntimeTool, RuntimeToolProvider, ToolCallContext } from '../../tools/tool-kinds.js';
import type { ContextContributor, ContextContributorInput, ContextSection } from '../context-contributors.js';

/**
 * Skills attached to an agent (graph items of type `skill`, item_id = skill name) reach the model in two steps:
 * their names and descriptions are listed in the system prompt (SkillContext), and the full instructions arrive
 * only when the model calls `load_skill` (SkillToolProvider). A long instruction set therefore costs context only
 * in runs that need it.
 */

export interface SkillCatalog {
  findMany(organizationId: string, names: string[]): Promise<{ name: string; description: string; instructions: string }[]>;
}

export const LOAD_SKILL_TOOL = 'load_skill';

function skillNames(agent: RunContextAgent): string[] {
  return [...new Set(agent.graph.filter((g) => g.type === 'skill' && g.item_id).map((g) => g.item_id))];
}

export class SkillContext implements ContextContributor {
  constructor(private readonly skills: SkillCatalog) {}

  contribute({ agent }: ContextContributorInput): Awaitable<ContextSection | null> {
    const names = skillNames(agent);
    if (!names.length) return null;
    return this.sectionFor(agent.organization_id, names);
  }

  private async sectionFor(organizationId: string, names: string[]): Promise<ContextSection | null> {
    const skills = await this.skills.findMany(organizationId, names);
    if (!skills.length) return null;
    const list = skills.map((s) => `- ${s.name}: ${s.description}`).join('\n');
    return {
      title: 'Skills',
      text:
        `You have these skills: instruction sets for particular kinds of work. When a request matches one, first call ` +
        `\`${LOAD_SKILL_TOOL}\` with its name and follow the instructions it returns.\n${list}`,
    };
  }
}

export class SkillToolProvider implements RuntimeToolProvider {
  constructor(private readonly skills: SkillCatalog) {}

  buildTools(agent: RunContextAgent, ctx: ToolCallContext): Awaitable<RuntimeTool[]> {
    const names = skillNames(agent);
    if (!names.length) return [];
    return this.toolsFor(names, ctx);
  }

  private async toolsFor(names: string[], ctx: ToolCallContext): Promise<RuntimeTool[]> {
    const available = (await this.skills.findMany(ctx.organizationId, names)).map((s) => s.name);
    if (!available.length) return [];
    return [
      {
        name: LOAD_SKILL_TOOL,
        description: 'Load the full instructions of one of your skills (listed in the system prompt) before using it.',
        inputSchema: {
          type: 'object',
          properties: { skill_name: { type: 'string', enum: available, description: 'The skill to load' } },
          required: ['skill_name'],
          additionalProperties: false,
        },
        mutating: false,
        execute: async (args, callCtx) => {
          const name = String(args.skill_name ?? '');
          if (!available.includes(name)) throw new Error(`Unknown skill '${name}'. Available: ${available.join(', ')}`);
          const [skill] = await this.skills.findMany(callCtx.organizationId, [name]);
          if (!skill) throw new Error(`Skill '${name}' no longer exists`);
          return `# Skill: ${skill.name}\n\n${skill.instructions}`;
        },
      },
    ];
  }
}
