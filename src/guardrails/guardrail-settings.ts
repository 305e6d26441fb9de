import type { AgentConfig } from '../agents/agent.schemas.js';
/**
 * The guardrail fields of agno_settings (spec 2.5), from the typed configuration (the schema's defaults are applied
 * when it is read: agents/agent-config.ts).
 */

import { INJECTION_CONTENT_ACTIONS, MODERATION_CATEGORIES, type InjectionContentAction } from './guardrail-vocabulary.js';

export { INJECTION_CONTENT_ACTIONS, MODERATION_CATEGORIES, type InjectionContentAction } from './guardrail-vocabulary.js';

export interface GuardrailSettings {
  piiDetection: boolean;
  piiMask: boolean;
  injectionDetection: boolean;
  injectionContentAction: InjectionContentAction;
  moderation: boolean;
  /** null: any category OpenAI flags fails the task. */
  moderationCategories: string[] | null;
}

export function guardrailSettings(agent: Pick<AgentConfig, 'agno_settings'>): GuardrailSettings {
  const a = agent.agno_settings;
  const categories = a.openai_moderation_categories;
  return {
    piiDetection: a.pii_detection_enabled,
    piiMask: a.pii_detection_mask,
    injectionDetection: a.prompt_injection_detection_enabled,
    // Absent (not in the specification, no default): warn.
    injectionContentAction: a.prompt_injection_content_action ?? 'warn',
    moderation: a.openai_moderation_enabled,
    // An empty list is no filter, as null is: any category OpenAI flags fails the task.
    moderationCategories: categories && categories.length > 0 ? categories : null,
  };
}
