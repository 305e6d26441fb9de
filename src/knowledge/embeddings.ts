import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embedMany, type EmbeddingModel } from 'ai';
import { deadlineSignal } from '../lib/abort.js';
import { boundedFetch } from '../net/bounded-response.js';

/** Turns texts into vectors. Absent when no embedding endpoint is configured: search is then lexical only. */
export interface EmbeddingProvider {
  /** Identifies the vector space: vectors of different models are never compared. */
  readonly model: string;
  /** `maxRetries` retries a failed request (the default suits indexing; a search asks for none). */
  embed(texts: string[], signal?: AbortSignal, maxRetries?: number): Promise<number[][]>;
}

/** Texts per request: OpenAI accepts 2048 inputs, compatible servers often fewer. */
const BATCH = 64;

/**
 * Deadline of one batch, its retries included: an endpoint that stalls fails the call (an indexing job is retried,
 * a search answers lexically) instead of holding an indexer slot or a request for good.
 */
export const EMBED_TIMEOUT_MS = 60_000;

/** Most bytes one answer may take: 64 vectors of 3,072 dimensions are ~4 MB of JSON. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * An OpenAI-compatible `/embeddings` endpoint (OpenAI, Azure, Ollama, vLLM, TEI, ...) through the AI SDK's
 * compatible provider. The endpoint is the operator's configuration, not a user's URL, so it is called directly.
 */
export class OpenAiCompatibleEmbeddings implements EmbeddingProvider {
  private readonly embeddingModel: EmbeddingModel;

  private readonly timeoutMs: number;

  constructor(opts: { baseUrl: string; model: string; apiKey?: string; timeoutMs?: number }) {
    const provider = createOpenAICompatible({ name: 'embeddings', baseURL: opts.baseUrl, apiKey: opts.apiKey, fetch: boundedFetch(fetch, MAX_ANSWER_BYTES) });
    this.embeddingModel = provider.embeddingModel(opts.model);
    this.model = opts.model;
    this.timeoutMs = opts.timeoutMs ?? EMBED_TIMEOUT_MS;
  }

  readonly model: string;

  async embed(texts: string[], signal?: AbortSignal, maxRetries = 2): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const deadline = deadlineSignal(signal, this.timeoutMs);
      try {
        const { embeddings } = await embedMany({ model: this.embeddingModel, values: texts.slice(i, i + BATCH), abortSignal: deadline.signal, maxRetries });
        out.push(...embeddings);
      } finally {
        deadline.release();
      }
    }
    return out;
  }
}

/** The text embedded for a chunk: its heading path gives the passage its topic. */
export function embeddingText(heading: string, content: string): string {
  return heading ? `${heading}\n\n${content}` : content;
}
