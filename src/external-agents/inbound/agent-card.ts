import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import type { AgentConfig } from '../../agents/agent.schemas.js';

/** The A2A agent card of one Agentry agent: its name, description and skills, at its own JSON-RPC endpoint. */

export interface CardAgent {
  id: string;
  version: number | 'draft';
  /** Typed and complete (agents/agent-config.ts): the card reads the fields as they are. */
  config: CardConfig;
}
type CardConfig = Readonly<Pick<AgentConfig, 'name' | 'description' | 'type' | 'graph' | 'skills'>>;

/** Where an agent is served over A2A (the card's interfaces point here). */
export function a2aEndpoint(apiBase: string, agentId: string): string {
  return `${apiBase.replace(/\/+$/, '')}/v1/a2a/agents/${encodeURIComponent(agentId)}`;
}

export function agentCard(agent: CardAgent, apiBase: string): AgentCard {
  const url = a2aEndpoint(apiBase, agent.id);
  const name = agent.config.name;
  const description = agent.config.description || name;
  return {
    name,
    description,
    // v1.0 first (what current clients pick), v0.3 for the clients that still speak it (the SDK's compat layer).
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    ],
    provider: undefined,
    version: String(agent.version),
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      apiKey: { scheme: { $case: 'apiKeySecurityScheme', value: { description: 'The Agentry organization API key', location: 'header', name: 'x-api-key' } } },
    },
    securityRequirements: [{ schemes: { apiKey: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: skillsOf(agent.config, name, description),
    signatures: [],
  };
}

/**
 * The agent itself is the first skill (a run of it answers any text); its named tools, sub-agents and skills follow,
 * so a caller choosing among agents sees what each can do.
 */
function skillsOf(config: CardConfig, name: string, description: string): AgentSkill[] {
  const skill = (id: string, n: string, d: string, tags: string[]): AgentSkill => ({ id, name: n, description: d, tags, examples: [], inputModes: [], outputModes: [], securityRequirements: [] });
  const out = [skill('run', name, description, [config.type])];
  const seen = new Set(['run']);
  // A `skills` element's description describes the skill graph item it resolved to.
  const described = new Map(config.skills.map((s) => [String(s.name ?? s.skill_name ?? ''), s.description] as const));
  for (const item of config.graph) {
    const id = item.item_id;
    if (seen.has(id)) continue;
    seen.add(id);
    const kind = item.sub_type ? `${item.type}/${item.sub_type}` : item.type;
    const own = item.type === 'skill' ? described.get(id) : undefined;
    out.push(skill(id, item.name || id, typeof own === 'string' && own ? own : `A ${kind} the agent can use`, [kind]));
  }
  // Skill entries are JSON objects whose inner fields the schema does not type: read defensively.
  for (const s of config.skills) {
    const id = String(s.name ?? s.skill_name ?? '');
    if (!id || seen.has(id)) continue;
    seen.add(id);
    out.push(skill(id, id, typeof s.description === 'string' ? s.description : id, ['skill']));
  }
  return out;
}
