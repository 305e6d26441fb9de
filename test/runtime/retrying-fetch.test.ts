import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRetryingFetch } from '../../src/llm/retrying-fetch.js';

/** The transport-level retry policy against a real HTTP server that misbehaves on purpose. */
describe('retrying fetch', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  });

  async function serve(answers: ((res: import('node:http').ServerResponse) => void)[]): Promise<{ url: string; hits: () => number }> {
    let hits = 0;
    server = createServer((req, res) => {
      req.resume();
      const answer = answers[Math.min(hits++, answers.length - 1)];
      answer(res);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, hits: () => hits };
  }

  const policy = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1000 };

  it('retries a connection the server dropped, then returns the answer', async () => {
    const s = await serve([(res) => res.socket?.destroy(), (res) => res.end('ok')]);
    const retries: number[] = [];
    const res = await createRetryingFetch(fetch, policy, (r) => retries.push(r.status))(s.url, { method: 'POST', body: '{}' });
    expect(await res.text()).toBe('ok');
    expect(s.hits()).toBe(2);
    expect(retries).toEqual([0]);
  });

  it('gives up after maxRetries and returns the last answer', async () => {
    const s = await serve([(res) => res.writeHead(503, { 'retry-after': '0' }).end('busy')]);
    const res = await createRetryingFetch(fetch, policy)(s.url, { method: 'POST', body: '{}' });
    expect(res.status).toBe(503);
    expect(s.hits()).toBe(3);
  });

  it('does not wait for a Retry-After beyond the bound', async () => {
    const s = await serve([(res) => res.writeHead(429, { 'retry-after': '3600' }).end('later'), (res) => res.end('ok')]);
    const res = await createRetryingFetch(fetch, policy)(s.url, { method: 'POST', body: '{}' });
    expect(res.status).toBe(429);
    expect(s.hits()).toBe(1);
  });

  it('stops waiting when the call is aborted', async () => {
    const s = await serve([(res) => res.writeHead(429, { 'retry-after': '1' }).end('later'), (res) => res.end('ok')]);
    const ac = new AbortController();
    const pending = createRetryingFetch(fetch, policy, () => ac.abort(new Error('stopped')))(s.url, { method: 'POST', body: '{}', signal: ac.signal });
    await expect(pending).rejects.toThrow('stopped');
    expect(s.hits()).toBe(1);
  });
});
