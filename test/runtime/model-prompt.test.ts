import type { ModelMessage } from 'ai';
import { convertToLanguageModelPrompt } from 'ai/internal';
import { describe, expect, it } from 'vitest';
import { textOnlyPrompt } from '../../src/runtime/model-prompt.js';

// The text-only prompt is built without the SDK's conversion: it must be exactly what the SDK builds.
const sdk = (system: string | undefined, messages: ModelMessage[]) =>
  convertToLanguageModelPrompt({ prompt: { system, messages }, supportedUrls: {}, download: undefined, abortSignal: undefined });

describe('textOnlyPrompt', () => {
  it.each<[string, string | undefined, ModelMessage[]]>([
    ['one user message', 'Be brief.', [{ role: 'user', content: 'hi' }]],
    ['no system prompt', undefined, [{ role: 'user', content: 'hi' }]],
    ['an empty system prompt', '', [{ role: 'user', content: '' }]],
    [
      'earlier turns, with provider options',
      'You help.',
      [
        { role: 'user', content: 'first', providerOptions: { openai: { user: 'u1' } } },
        { role: 'assistant', content: 'answer' },
        { role: 'user', content: 'second' },
      ],
    ],
  ])('is what the SDK builds for %s', async (_what, system, messages) => {
    expect(textOnlyPrompt(system, messages)).toEqual(await sdk(system, messages));
  });

  it.each<[string, ModelMessage[]]>([
    ['parts', [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]],
    ['a file', [{ role: 'user', content: [{ type: 'file', data: 'aGk=', mediaType: 'text/plain' }] }]],
    [
      'a tool result',
      [
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 't', input: {} }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 't', output: { type: 'text', value: 'ok' } }] },
      ],
    ],
  ])('leaves a prompt with %s to the SDK', (_what, messages) => {
    expect(textOnlyPrompt('s', messages)).toBeUndefined();
  });
});
