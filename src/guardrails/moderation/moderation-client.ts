import type { OpenAIEndpoint } from '../../llm/llm.service.js';
import { readTextBounded } from '../../net/index.js';

/**
 * OpenAI's moderation endpoint (POST {base}/moderations): one call with the texts as an array, one result each.
 * Bounded: texts are cut into pieces the endpoint accepts, a call has a deadline, and an answer is read only up to
 * a size no honest answer reaches.
 */

export interface ModerationResult {
  flagged: boolean;
  /** Category name -> flagged, as the endpoint reports them. */
  categories: Record<string, boolean>;
  scores: Record<string, number>;
}

export class ModerationCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModerationCallError';
  }
}

/** Characters per input piece and pieces per call (the endpoint takes ~32k tokens per input). */
export const MODERATION_PIECE_CHARS = 20_000;
export const MODERATION_PIECES_PER_CALL = 16;
/** Calls per run: an input longer than this many pieces is refused rather than moderated in part. */
export const MODERATION_MAX_CALLS = 16;
const MODERATION_TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 1024 * 1024;

export function moderationPieces(texts: string[]): string[] {
  const out: string[] = [];
  for (const t of texts) {
    for (let i = 0; i < t.length; i += MODERATION_PIECE_CHARS) {
      const piece = t.slice(i, i + MODERATION_PIECE_CHARS);
      if (piece.trim()) out.push(piece);
    }
  }
  return out;
}

/** Every piece of `texts`, in calls of MODERATION_PIECES_PER_CALL; ModerationCallError when there are too many. */
export async function moderate(endpoint: OpenAIEndpoint, model: string, texts: string[], signal: AbortSignal): Promise<ModerationResult[]> {
  const pieces = moderationPieces(texts);
  const limit = MODERATION_PIECES_PER_CALL * MODERATION_MAX_CALLS;
  if (pieces.length > limit) {
    throw new ModerationCallError(`the input is too long to moderate (more than ${(limit * MODERATION_PIECE_CHARS).toLocaleString('en-US')} characters)`);
  }
  const results: ModerationResult[] = [];
  for (let i = 0; i < pieces.length; i += MODERATION_PIECES_PER_CALL) {
    results.push(...(await moderateOnce(endpoint, model, pieces.slice(i, i + MODERATION_PIECES_PER_CALL), signal)));
  }
  return results;
}

async function moderateOnce(endpoint: OpenAIEndpoint, model: string, input: string[], signal: AbortSignal): Promise<ModerationResult[]> {
  const url = `${endpoint.baseUrl.replace(/\/+$/, '')}/moderations`;
  let res: Response;
  try {
    res = await endpoint.fetch(url, {
      method: 'POST',
      headers: { ...endpoint.headers, 'content-type': 'application/json', authorization: `Bearer ${endpoint.apiKey}` },
      body: JSON.stringify({ model, input }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(MODERATION_TIMEOUT_MS)]),
    });
  } catch (e) {
    signal.throwIfAborted();
    throw new ModerationCallError(`the moderation endpoint could not be reached (${e instanceof Error ? e.message : String(e)})`);
  }
  const raw = await readTextBounded(res, MAX_RESPONSE_BYTES, () => new ModerationCallError('the moderation endpoint answered more than 1 MiB'));
  if (!res.ok) throw new ModerationCallError(`the moderation endpoint answered ${res.status}${providerMessage(raw)}`);
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new ModerationCallError('the moderation endpoint did not answer JSON');
  }
  const results = (body as { results?: unknown }).results;
  if (!Array.isArray(results) || results.length !== input.length) throw new ModerationCallError('the moderation endpoint answered without one result per input');
  return results.map((r) => {
    const o = (r && typeof r === 'object' ? r : {}) as Record<string, unknown>;
    return { flagged: o.flagged === true, categories: booleans(o.categories), scores: numbers(o.category_scores) };
  });
}

function providerMessage(raw: string): string {
  try {
    const m = (JSON.parse(raw) as { error?: { message?: unknown } }).error?.message;
    return typeof m === 'string' ? `: ${m.slice(0, 300)}` : '';
  } catch {
    return '';
  }
}

function booleans(v: unknown): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out[k] = x === true;
  return out;
}

function numbers(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'number') out[k] = x;
  return out;
}
