import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OpenAiCompatibleEmbeddings } from '../../src/knowledge/embeddings.js';
import { AnswerTooLarge } from '../../src/net/bounded-response.js';
import { startEmbeddingsServer, type EmbeddingsServer } from './embeddings-server.js';

/** `{ url, close }` of a server listening on 127.0.0.1, whose open connections are cut when it closes. */
async function listen(server: Server | HttpServer): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe('the embeddings endpoint cannot hold a call or fill memory', () => {
  let silent: Awaited<ReturnType<typeof listen>>;
  let endless: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    // Accepts the connection and never sends a byte.
    silent = await listen(createServer(() => {}));
    // Answers 200 JSON and never ends it.
    endless = await listen(
      createHttpServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        res.write('{"data":[');
        pump();
      }),
    );
  });
  afterAll(async () => {
    await silent?.close();
    await endless?.close();
  });

  it('fails a batch once its deadline passes, retries included', async () => {
    const e = new OpenAiCompatibleEmbeddings({ baseUrl: silent.url, model: 'm', timeoutMs: 300 });
    const started = performance.now();
    await expect(e.embed(['a text'])).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('fails an answer that does not end once it passes the size bound', async () => {
    const e = new OpenAiCompatibleEmbeddings({ baseUrl: endless.url, model: 'm', timeoutMs: 20_000 });
    const err = await e.embed(['a text'], undefined, 0).then(
      () => undefined,
      (x: unknown) => x,
    );
    // The AI SDK wraps it ("Failed to process successful response"); the cause is the bound.
    const causes: unknown[] = [];
    for (let c = err; c; c = (c as { cause?: unknown }).cause) causes.push(c);
    expect(causes.some((c) => c instanceof AnswerTooLarge)).toBe(true);
  });
});

describe("an embedding call's deadline is linked to the caller's signal, not combined with AbortSignal.any", () => {
  let emb: EmbeddingsServer;
  beforeAll(async () => {
    emb = await startEmbeddingsServer();
  });
  afterAll(async () => {
    await emb?.close();
  });

  it("costs no AbortSignal.any per batch and leaves no listener on the caller's signal once it ends", async () => {
    // AbortSignal.any costs ~20 us a call on Node 20 (docs/decisions.md); an indexing job embeds batch after batch.
    const any = vi.spyOn(AbortSignal, 'any');
    try {
      const e = new OpenAiCompatibleEmbeddings({ baseUrl: emb.baseUrl, model: 'm' });
      const caller = new AbortController();
      const texts = Array.from({ length: 130 }, (_, i) => `text number ${i}`);
      const vectors = await e.embed(texts, caller.signal, 0);
      expect(vectors).toHaveLength(130);
      expect(emb.requests.length).toBe(3);
      expect(any).not.toHaveBeenCalled();
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    } finally {
      any.mockRestore();
    }
  });

  it("still ends a call the endpoint never answers when the caller's signal aborts, with the caller's reason", async () => {
    emb.hang = true;
    try {
      const e = new OpenAiCompatibleEmbeddings({ baseUrl: emb.baseUrl, model: 'm', timeoutMs: 60_000 });
      const caller = new AbortController();
      const started = performance.now();
      setTimeout(() => caller.abort(new Error('the search was cancelled')), 100);
      await expect(e.embed(['a text'], caller.signal, 0)).rejects.toThrow('the search was cancelled');
      expect(performance.now() - started).toBeLessThan(3000);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    } finally {
      emb.hang = false;
    }
  });
});
