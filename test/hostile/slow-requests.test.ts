import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, enableWebhook, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/**
 * A client that sends its headers and then never finishes the body held its connection open for as long as it liked
 * (Fastify turns Node's request timeout off): on both listeners, for minutes in a probe, so enough such clients
 * exhaust the process's file descriptors. Now the request is answered 408 in the contract's shape after
 * AGENTRY_REQUEST_TIMEOUT_MS and the connection closed; a request that has arrived may take longer to answer.
 * Transport only, so one database.
 */

const TIMEOUT_MS = 1000;

interface RawAnswer {
  text: string;
  closedAfterMs: number;
}

/** Sends `head` and `bodyStart` over a raw socket and waits (at most `waitMs`) for the server to close it. */
function rawRequest(base: string, head: string, bodyStart: string, waitMs: number): Promise<RawAnswer | 'still open'> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const started = Date.now();
    let text = '';
    const socket = connect(Number(port), hostname, () => socket.write(head + bodyStart));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('still open');
    }, waitMs);
    socket.on('data', (d) => (text += String(d)));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
  });
}

describe('requests that are never finished', () => {
  let w: WebhookWorld;
  let agentId: string;
  let publicPath: string;

  beforeAll(async () => {
    w = await startWebhookWorld('sqlite', { AGENTRY_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) });
    agentId = await createAgent(w);
    publicPath = new URL(await enableWebhook(w, agentId)).pathname;
  });
  afterAll(async () => {
    await w?.close();
  });

  it('are answered 408 in the contract shape and closed, on the API, the fast lane and the Fastify webhook routes', async () => {
    const post = (path: string, type: string, key?: string) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\ncontent-type: ${type}\r\n${key ? `x-api-key: ${key}\r\n` : ''}content-length: 1000\r\n\r\n`;
    const cases: [string, string, string][] = [
      [w.api, post('/v1/agents', 'application/json', w.keyA), '{"name":'],
      [w.hooks, post(publicPath, 'application/json'), '{"prompt":'],
      [w.hooks, post(`/?agent_id=${agentId}`, 'application/json', w.keyA), '{"prompt":'],
      [w.hooks, post(publicPath, 'application/x-www-form-urlencoded'), 'prompt='],
    ];
    const answers = await Promise.all(cases.map(([base, head, start]) => rawRequest(base, head, start, TIMEOUT_MS + 4000)));
    for (const [i, a] of answers.entries()) {
      expect(a, cases[i]![1]).not.toBe('still open');
      const { text, closedAfterMs } = a as RawAnswer;
      expect(text, cases[i]![1]).toMatch(/^HTTP\/1\.1 408 /);
      expect(text.toLowerCase()).toContain('x-content-type-options: nosniff');
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({ detail: 'Request not received in time' });
      expect(closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    }
  });

  it('answer oversized headers in the contract shape too', async () => {
    const a = await rawRequest(w.api, `GET /v1/agents?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, '', 4000);
    expect(a).not.toBe('still open');
    const { text } = a as RawAnswer;
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({ detail: 'Request Header Fields Too Large' });
  });

  it('do not cut an answer that takes longer than the request timeout once the request has arrived', async () => {
    w.llm.reply({ text: 'slow answer', delayMs: TIMEOUT_MS * 2 });
    const r = await fetch(`${w.hooks}/?agent_id=${agentId}&asynchronous=false`, {
      method: 'POST',
      headers: { 'x-api-key': w.keyA, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'take your time' }),
    });
    expect(r.status).toBe(200);
    expect((await r.json()).result).toBe('slow answer');
  });
});
