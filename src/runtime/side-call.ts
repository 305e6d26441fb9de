import type { LanguageModel } from 'ai';
import { describeLlmError } from '../llm/llm-errors.js';
import type { ProviderOptions } from '../llm/llm-providers.js';
import type { TaskTokens } from '../tasks/task.types.js';
import { openModelStream } from './model-stream.js';

/**
 * A helper call to the agent's own model that is not part of the conversation: summarising a thread, compressing
 * a tool result, extracting memories. No tools, no `chunk` events (its text is not the answer); the caller puts
 * one `llm_call` event with a `purpose` in the trace. Throws with a message fit for a log or the trace.
 */
export interface SideCallInput {
  model: LanguageModel;
  provider: string;
  modelName: string;
  providerOptions?: ProviderOptions;
  system: string;
  prompt: string;
  signal: AbortSignal;
}

export interface SideCallResult {
  text: string;
  tokens: TaskTokens;
}

export async function sideCall(input: SideCallInput): Promise<SideCallResult> {
  let failure: unknown;
  let text = '';
  let tokens: TaskTokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  try {
    const step = await openModelStream({
      model: input.model,
      system: input.system,
      messages: [{ role: 'user', content: input.prompt }],
      tools: undefined,
      toolChoice: undefined,
      providerOptions: input.providerOptions,
      abortSignal: input.signal,
    });
    for await (const delta of step.textDeltas()) text += delta;
    failure = step.failure;
    const u = step.finished?.usage;
    if (u) {
      const p = u.inputTokens ?? 0;
      const c = u.outputTokens ?? 0;
      tokens = { prompt_tokens: p, completion_tokens: c, total_tokens: u.totalTokens ?? p + c };
    }
  } catch (e) {
    failure = e;
  }
  input.signal.throwIfAborted();
  if (failure !== undefined) throw new Error(describeLlmError(input.provider, input.modelName, failure), { cause: failure });
  return { text: text.trim(), tokens };
}
