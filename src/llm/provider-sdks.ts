import { loadOnce } from '../lib/load-once.js';

/**
 * The provider-specific AI SDK packages (OpenAI's Responses API, Anthropic, Gemini), loaded by the first model built
 * on them rather than at start: together ~4 MB resident, and a deployment uses one or two of them, often none (every
 * OpenAI-compatible provider and every custom llm_api_base go through `@ai-sdk/openai-compatible`, which the direct
 * stream needs anyway). Idle memory is a measured target (docs/benchmarks.md). Concurrent first uses share one load.
 */
export const openaiSdk = loadOnce(() => import('@ai-sdk/openai'));
export const anthropicSdk = loadOnce(() => import('@ai-sdk/anthropic'));
export const googleSdk = loadOnce(() => import('@ai-sdk/google'));
