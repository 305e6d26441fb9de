import type { ModelMessage } from 'ai';
import { InvalidPromptError } from 'ai';
import { convertToLanguageModelPrompt } from 'ai/internal';

/**
 * The SDK's standardizePrompt without its zod pass over every message, which was ~5% of a short run's CPU: our
 * messages are built by the runtime from typed parts (or stored from earlier runs' outputs), and the provider's
 * prompt conversion still refuses a part it does not know. The checks that remain are the ones that can fail for us.
 */
export function standardPrompt(system: string | undefined, messages: ModelMessage[]): { system: string | undefined; messages: ModelMessage[] } {
  if (messages.length === 0) throw new InvalidPromptError({ prompt: undefined, message: 'messages must not be empty' });
  if (messages.some((m) => m.role === 'system')) throw new InvalidPromptError({ prompt: undefined, message: 'System messages belong in the system option' });
  return { system, messages };
}

/** The prompt of a model call as the SDK hands it to the provider (what convertToLanguageModelPrompt returns). */
export type ModelPrompt = Awaited<ReturnType<typeof convertToLanguageModelPrompt>>;

/**
 * convertToLanguageModelPrompt's result for a prompt whose messages are all plain text (the usual run: the task's
 * input and earlier runs' answers), built as it builds it; undefined for any other prompt (files, tool calls and
 * results, parts), which goes through the SDK. Skips its asset scan and download set-up, and two awaits, per call.
 */
export function textOnlyPrompt(system: string | undefined, messages: ModelMessage[]): ModelPrompt | undefined {
  for (const m of messages) if ((m.role !== 'user' && m.role !== 'assistant') || typeof m.content !== 'string') return undefined;
  const out: ModelPrompt = system != null ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    out.push({ role: m.role as 'user' | 'assistant', content: [{ type: 'text', text: m.content as string }], providerOptions: m.providerOptions });
  }
  return out;
}

/** Any other prompt, converted by the SDK (files downloaded where the model cannot take their URLs). */
export async function sdkPrompt(
  prompt: { system: string | undefined; messages: ModelMessage[] },
  supportedUrls: () => PromiseLike<Record<string, RegExp[]>> | Record<string, RegExp[]>,
  abortSignal: AbortSignal,
): Promise<ModelPrompt> {
  return convertToLanguageModelPrompt({ prompt, supportedUrls: await supportedUrls(), download: undefined, abortSignal });
}
