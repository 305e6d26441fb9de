import type { ModelMessage } from 'ai';

/**
 * What the trace keeps of one LLM call's input and output (the `input` and `output` of its `llm_call` event), so
 * a person can see what the model was sent and what it answered. It is taken from the messages handed to the
 * provider call, i.e. after anything the runtime changed or masked before sending: the trace never holds more than
 * the provider received. Credentials are never in messages (they travel in headers).
 *
 * Bounded: each side is cut to AGENTRY_TRACE_LLM_IO_CHARS characters (default 16,000; 0 keeps nothing);
 * the oldest messages are cut first, so the newest turns (what changed since the previous call) stay.
 */

let maxChars = 16_000;

/** Set once by the composition root from the configuration. */
export function setLlmIoLimit(chars: number): void {
  maxChars = chars;
}

export interface TracedMessage {
  role: string;
  content: string;
}

export interface LlmIo {
  input?: { system: string; messages: TracedMessage[]; truncated: boolean };
  output?: { text: string; tool_calls: { name: string; arguments: string }[]; truncated: boolean };
}

export function llmIoForTrace(system: string, messages: readonly ModelMessage[], text: string, toolCalls: readonly { toolName: string; input: unknown }[]): LlmIo {
  if (maxChars <= 0) return {};
  // Newest first, so the budget goes to the end of the conversation.
  let budget = maxChars;
  let truncated = false;
  const take = (s: string): string => {
    if (s.length <= budget) {
      budget -= s.length;
      return s;
    }
    truncated = true;
    const kept = budget > 0 ? `${s.slice(0, budget)}…` : '…';
    budget = 0;
    return kept;
  };
  const systemKept = take(system);
  const kept: TracedMessage[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (budget === 0) {
      truncated = true;
      break;
    }
    kept.push({ role: m.role, content: take(contentText(m.content)) });
  }
  kept.reverse();
  const input = { system: systemKept, messages: kept, truncated };

  budget = maxChars;
  truncated = false;
  const outText = take(text);
  const calls = toolCalls.map((c) => ({ name: c.toolName, arguments: take(typeof c.input === 'string' ? c.input : JSON.stringify(c.input ?? null)) }));
  return { input, output: { text: outText, tool_calls: calls, truncated } };
}

/** A message's content as text: text parts as they are, tool calls and results as `name(arguments)` / their output. */
function contentText(content: ModelMessage['content']): string {
  if (typeof content === 'string') return content;
  const parts: string[] = [];
  for (const p of content as readonly Record<string, unknown>[]) {
    switch (p.type) {
      case 'text':
      case 'reasoning':
        parts.push(String(p.text ?? ''));
        break;
      case 'tool-call':
        parts.push(`[tool call ${String(p.toolName)}] ${JSON.stringify(p.input ?? null)}`);
        break;
      case 'tool-result': {
        const out = p.output as { type?: string; value?: unknown } | undefined;
        const value = out && typeof out.value === 'string' ? out.value : JSON.stringify(out?.value ?? null);
        parts.push(`[tool result ${String(p.toolName)}] ${value}`);
        break;
      }
      case 'image':
      case 'file':
        parts.push(`[${String(p.type)}${typeof p.mediaType === 'string' ? ` ${p.mediaType}` : ''}]`);
        break;
      default:
        parts.push(`[${String(p.type)}]`);
    }
  }
  return parts.join('\n');
}
