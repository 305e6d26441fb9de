import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressPolicy, createSafeFetch, NODE_BODY, nodeBodyOf } from '../../src/net/index.js';

/**
 * safe-fetch's NODE_BODY option: a successful answer's body handed over as the Node stream it arrives on (what the
 * LLM stream reader uses), everything else as a normal Response.
 */

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/gzip') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync('unzipped on the way'));
    } else if (req.url === '/refused') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end('{"error":{"message":"slow down"}}');
    } else if (req.url === '/slow') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      // The rest never comes: the caller aborts.
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('plain answer');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

const fetch = createSafeFetch(createEgressPolicy(['127.0.0.1']));

async function text(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

describe('safe-fetch NODE_BODY', () => {
  it('hands a successful body over as a decoded Node stream, with status and headers on a bodiless Response', async () => {
    const res = await fetch(`${base}/gzip`, { [NODE_BODY]: true } as RequestInit);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(res.body).toBeNull();
    expect(await text(nodeBodyOf(res)!)).toBe('unzipped on the way');
  });

  it('answers a refused call as a normal Response, whose body the error handling reads', async () => {
    const res = await fetch(`${base}/refused`, { [NODE_BODY]: true } as RequestInit);
    expect(res.status).toBe(429);
    expect(nodeBodyOf(res)).toBeUndefined();
    expect(await res.json()).toEqual({ error: { message: 'slow down' } });
  });

  it('leaves calls without the option as they were', async () => {
    const res = await fetch(`${base}/plain`);
    expect(nodeBodyOf(res)).toBeUndefined();
    expect(await res.text()).toBe('plain answer');
  });

  it('ends the Node stream with the abort reason when the call is aborted mid-body', async () => {
    const abort = new AbortController();
    const res = await fetch(`${base}/slow`, { signal: abort.signal, [NODE_BODY]: true } as RequestInit);
    const chunks = nodeBodyOf(res)![Symbol.asyncIterator]();
    expect(String((await chunks.next()).value)).toBe('data: first\n\n');
    abort.abort(new Error('stopped by the caller'));
    await expect(chunks.next()).rejects.toThrow('stopped by the caller');
  });
});
