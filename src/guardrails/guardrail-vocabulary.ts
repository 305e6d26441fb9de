/** The guardrail settings' allowed values: shared by the agent schema and the settings reader (no imports, so neither depends on the other). */

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
