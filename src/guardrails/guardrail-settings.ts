/**
 * The guardrail fields of agno_settings (spec 2.5), read defensively from the stored agent (loose JSON), with the
 * schema's defaults.
 */

/** What a prompt injection found in content (files, knowledge passages, tool results) does; the input always fails. */
export const INJECTION_CONTENT_ACTIONS = ['warn', 'error'] as const;
export type InjectionContentAction = (typeof INJECTION_CONTENT_ACTIONS)[number];

/** The categories OpenAI's moderation endpoint reports (omni-moderation), accepted in openai_moderation_categories. */
export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

export interface GuardrailSettings {
  piiDetection: boolean;
  piiMask: boolean;
  injectionDetection: boolean;
  injectionContentAction: InjectionContentAction;
  moderation: boolean;
  /** null: any category OpenAI flags fails the task. */
  moderationCategories: string[] | null;
}

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function guardrailSettings(agent: Record<string, unknown>): GuardrailSettings {
  const a = obj(agent.agno_settings);
  const categories = Array.isArray(a.openai_moderation_categories)
    ? a.openai_moderation_categories.filter((c): c is string => typeof c === 'string')
    : null;
  return {
    piiDetection: a.pii_detection_enabled === true,
    piiMask: a.pii_detection_mask !== false,
    injectionDetection: a.prompt_injection_detection_enabled === true,
    injectionContentAction: a.prompt_injection_content_action === 'error' ? 'error' : 'warn',
    moderation: a.openai_moderation_enabled === true,
    moderationCategories: categories && categories.length > 0 ? categories : null,
  };
}
