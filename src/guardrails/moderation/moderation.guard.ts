import type { OpenAIEndpoint } from '../../llm/llm.service.js';
import { GuardrailRefusal, type Guard, type GuardContext } from '../guardrail.types.js';
import { moderate, ModerationCallError } from './moderation-client.js';

/**
 * agno_settings.openai_moderation_enabled: the caller's input (text, additional context, uploaded-file text, after
 * PII masking) goes to OpenAI's moderation endpoint once, before the first LLM call. A flagged input fails the task
 * with the categories in the error: with openai_moderation_categories set, only those categories count; unset,
 * any category OpenAI flags does. The check never silently passes: no OpenAI credential, or an endpoint that fails
 * after the transport's retries, fails the task too.
 */
export class ModerationGuard implements Guard {
  readonly name = 'moderation' as const;

  constructor(
    private readonly endpoint: () => Promise<OpenAIEndpoint | null>,
    private readonly model: string,
    private readonly categories: string[] | null,
  ) {}

  async screenInput(texts: string[], ctx: GuardContext): Promise<void> {
    const endpoint = await this.endpoint();
    if (!endpoint) {
      await ctx.report({ guard: 'moderation', action: 'refused', reason: 'no_credentials' });
      throw new GuardrailRefusal(
        'moderation',
        'agno_settings.openai_moderation_enabled is true, but there is no OpenAI credential to call the moderation endpoint: the agent ' +
          "does not run on openai and the server's OPENAI_API_KEY is not set. Set OPENAI_API_KEY on the server, run the agent on openai, " +
          'or turn openai_moderation_enabled off.',
      );
    }
    let results;
    try {
      results = await moderate(endpoint, this.model, texts, ctx.signal);
    } catch (e) {
      if (!(e instanceof ModerationCallError)) throw e;
      await ctx.report({ guard: 'moderation', action: 'refused', reason: 'endpoint_failed' });
      throw new GuardrailRefusal('moderation', `The moderation check required by agno_settings.openai_moderation_enabled failed: ${e.message}.`);
    }
    const flagged = new Set<string>();
    for (const r of results) {
      for (const [category, on] of Object.entries(r.categories)) {
        if (on && (this.categories ? this.categories.includes(category) : r.flagged)) flagged.add(category);
      }
    }
    if (flagged.size === 0) {
      await ctx.report({ guard: 'moderation', action: 'passed', inputs: results.length });
      return;
    }
    const categories = [...flagged].sort();
    await ctx.report({ guard: 'moderation', action: 'refused', categories });
    throw new GuardrailRefusal('moderation', `The input was flagged by OpenAI moderation (categories: ${categories.join(', ')}); the task was refused.`);
  }
}
