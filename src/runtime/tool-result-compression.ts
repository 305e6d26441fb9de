import type { AgentConfig } from '../agents/agent.schemas.js';
import type { ModelMessage } from 'ai';
import type { Logger } from '../lib/logger.js';
import type { TaskTokens } from '../tasks/task.types.js';
import { sideCall, type SideCallInput } from './side-call.js';
import type { RunRequest } from './task-runner.js';

/**
 * agno_settings.tool_calls_compression (spec 2.5): once a run's context holds more than `threshold` tool results,
 * every result but the newest `threshold` is rewritten shorter by the agent's own model, following `instructions`.
 * Only what the model is sent changes: the thread and the trace keep every result whole. Each result is compressed
 * once (the compressed text is remembered by call id); short results are left as they are.
 */

export const DEFAULT_COMPRESSION_INSTRUCTIONS =
  'Compress this tool result for an AI agent that already used it: keep every fact, number, identifier, URL and ' +
  'error it may still need; drop formatting, repetition and boilerplate. Answer with the compressed text only.';
/** Results shorter than this cost less than a call to shorten them. */
export const MIN_COMPRESSED_CHARS = 500;
const MAX_INPUT_CHARS = 50_000;

export interface CompressionSettings {
  threshold: number;
  instructions: string;
}

export function compressionSettings(agent: Pick<AgentConfig, 'agno_settings'>): CompressionSettings | null {
  const c = agent.agno_settings.tool_calls_compression;
  if (!c.enabled) return null;
  return { threshold: c.threshold, instructions: c.instructions.trim() || DEFAULT_COMPRESSION_INSTRUCTIONS };
}

type ToolPart = Extract<Extract<ModelMessage, { role: 'tool' }>['content'][number], { type: 'tool-result' }>;

export class ToolResultCompressor {
  private readonly done = new Map<string, string>();
  tokens: TaskTokens = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

  constructor(
    private readonly settings: CompressionSettings,
    private readonly call: Omit<SideCallInput, 'system' | 'prompt' | 'signal'>,
    private readonly req: Pick<RunRequest, 'emit' | 'signal' | 'task'>,
    private readonly now: () => number,
    private readonly log: Logger,
  ) {}

  /** Rewrites, in place, the tool results of `messages` that are past the threshold. */
  async apply(messages: ModelMessage[]): Promise<void> {
    const parts: ToolPart[] = [];
    for (const m of messages) if (m.role === 'tool') for (const p of m.content) if (p.type === 'tool-result') parts.push(p);
    const old = parts.slice(0, Math.max(0, parts.length - this.settings.threshold));
    for (const p of old) {
      const out = p.output;
      if (out.type !== 'text') continue;
      const known = this.done.get(p.toolCallId);
      if (known !== undefined) {
        p.output = { type: 'text', value: known };
        continue;
      }
      if (out.value.length < MIN_COMPRESSED_CHARS) continue;
      const compressed = await this.compress(p.toolCallId, p.toolName, out.value);
      this.done.set(p.toolCallId, compressed);
      p.output = { type: 'text', value: compressed };
    }
  }

  private async compress(id: string, tool: string, text: string): Promise<string> {
    const started = this.now();
    try {
      const r = await sideCall({ ...this.call, system: this.settings.instructions, prompt: `Result of the tool ${tool}:\n${text.slice(0, MAX_INPUT_CHARS)}`, signal: this.req.signal });
      this.tokens = {
        prompt_tokens: this.tokens.prompt_tokens + r.tokens.prompt_tokens,
        completion_tokens: this.tokens.completion_tokens + r.tokens.completion_tokens,
        total_tokens: this.tokens.total_tokens + r.tokens.total_tokens,
      };
      // A "compression" that is not shorter is not used.
      const value = r.text && r.text.length < text.length ? `[compressed] ${r.text}` : text;
      await this.req.emit('llm_call', {
        purpose: 'tool_result_compression',
        provider: this.call.provider,
        model: this.call.modelName,
        latency_ms: this.now() - started,
        tokens: r.tokens,
        tool_call_id: id,
        original_chars: text.length,
        compressed_chars: value.length,
      });
      return value;
    } catch (err) {
      this.req.signal.throwIfAborted();
      this.log.warn({ err, task_id: this.req.task.id }, 'tool result compression failed; the result is sent whole');
      await this.req.emit('llm_call', { purpose: 'tool_result_compression', provider: this.call.provider, model: this.call.modelName, tool_call_id: id, error: (err as Error).message });
      return text;
    }
  }
}
