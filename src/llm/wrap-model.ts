import type { LanguageModelV3 } from '@ai-sdk/provider';

/**
 * `inner` with its streamed calls made by `doStream`; everything else is passed through. The model decorators
 * (llm-call-limits.ts, chat-completions-stream.ts) change only how a call streams, so they share this pass-through
 * and a field added to it reaches both.
 */
export function wrapModel(inner: LanguageModelV3, over: Pick<LanguageModelV3, 'doStream'>): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: inner.provider,
    modelId: inner.modelId,
    // Read on each use: a provider may compute it (or answer a promise) after the model is built.
    get supportedUrls() {
      return inner.supportedUrls;
    },
    doGenerate: (options) => inner.doGenerate(options),
    doStream: over.doStream,
  };
}
