import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 with a deterministic toy model: a text's vector counts
 * its words hashed into DIMENSIONS buckets, after mapping synonyms to one word. So texts that share words (or
 * synonyms) are close, which lets a test show what vector search finds that lexical search cannot.
 */
export const DIMENSIONS = 64;

const SYNONYMS: Record<string, string> = { automobile: 'car', vehicle: 'car', cars: 'car', physician: 'doctor', doctors: 'doctor' };

export function toyEmbedding(text: string): number[] {
  const v = new Array<number>(DIMENSIONS).fill(0);
  for (const raw of text.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 2)) {
    const w = SYNONYMS[raw] ?? raw;
    let h = 2166136261;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
    v[(h >>> 0) % DIMENSIONS]! += 1;
  }
  return v;
}

export interface EmbeddingsServer {
  baseUrl: string;
  /** Every request's inputs and model, oldest first. */
  requests: { model: string; input: string[]; authorization?: string }[];
  /** Answer the next requests with this status (e.g. 500) instead of vectors. */
  failWith: number | null;
  /** Leave the next requests unanswered (until the client gives up or the server closes). */
  hang: boolean;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const state: EmbeddingsServer = { baseUrl: '', requests: [], failWith: null, hang: false, close: async () => {} };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) return void res.writeHead(404).end();
      const parsed = JSON.parse(body) as { model: string; input: string | string[] };
      const input = Array.isArray(parsed.input) ? parsed.input : [parsed.input];
      state.requests.push({ model: parsed.model, input, authorization: req.headers.authorization });
      if (state.hang) return;
      if (state.failWith) {
        return void res.writeHead(state.failWith, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'scripted failure' } }));
      }
      const data = input.map((text, index) => ({ object: 'embedding', index, embedding: toyEmbedding(text) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: parsed.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}
