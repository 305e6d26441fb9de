import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRuntime, openaiAgent, runOnce } from './runtime-helpers.js';

/**
 * The Gemini adapters (`gemini`, `google_ai_studio`) speak Google's own protocol; `llm_api_base` is taken as a proxy
 * of it. A minimal streamGenerateContent server checks what reaches it and answers one streamed text.
 */
describe('agent runner over the Gemini API', () => {
  let server: Server;
  let base: string;
  const seen: { path: string; key: string | undefined; body: any }[] = [];
  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const parts: Buffer[] = [];
      for await (const c of req) parts.push(c as Buffer);
      seen.push({ path: req.url ?? '', key: req.headers['x-goog-api-key'] as string | undefined, body: JSON.parse(Buffer.concat(parts).toString()) });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const text of ['Gemini ', 'says hi.']) {
        res.write(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text }] } }] })}\n\n`);
      }
      res.write(
        `data: ${JSON.stringify({
          candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 4, totalTokenCount: 12 },
        })}\n\n`,
      );
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1beta`;
  });
  afterAll(async () => new Promise<void>((r) => server.close(() => r())));

  it.each(['gemini', 'google_ai_studio'])('%s answers through the Gemini protocol', async (provider) => {
    seen.length = 0;
    const rt = makeRuntime();
    const rec = await runOnce(rt, { agent: openaiAgent(base, { model_provider: provider, model_name: 'gemini-test' }) });
    expect(rec.outcome).toMatchObject({
      status: 'completed',
      result: 'Gemini says hi.',
      tokens: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 },
      llm_model_provider: provider,
    });
    expect(seen[0].path).toContain('/v1beta/models/gemini-test:streamGenerateContent');
    expect(seen[0].key).toBe('sk-agent-key');
    expect(JSON.stringify(seen[0].body.systemInstruction)).toContain('You are a meteorologist');
  });
});
