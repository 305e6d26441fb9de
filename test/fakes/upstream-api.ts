import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted upstream HTTP API on 127.0.0.1 for connector tests: every request is recorded, and answers come from
 * handlers the test registers per method and path (exact pathname). Unmatched requests answer 404 JSON.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface ScriptedAnswer {
  status?: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
}

export type UpstreamHandler = (req: RecordedRequest) => ScriptedAnswer | Promise<ScriptedAnswer>;

export interface UpstreamApi {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  requests: RecordedRequest[];
  on(method: string, path: string, handler: UpstreamHandler): void;
  /** Requests received for one method and path. */
  received(method: string, path: string): RecordedRequest[];
  close(): Promise<void>;
}

export async function startUpstreamApi(): Promise<UpstreamApi> {
  const handlers = new Map<string, UpstreamHandler>();
  const requests: RecordedRequest[] = [];
  const pending = new Set<ServerResponse>();

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    requests.push(recorded);
    const handler = handlers.get(`${recorded.method} ${recorded.path}`);
    const answer: ScriptedAnswer = handler ? await handler(recorded) : { status: 404, json: { error: 'no such route' } };
    pending.add(res);
    res.on('close', () => pending.delete(res));
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    if (res.destroyed) return;
    const headers: Record<string, string> = { ...(answer.headers ?? {}) };
    let body = '';
    if (answer.json !== undefined) {
      body = JSON.stringify(answer.json);
      headers['content-type'] ??= 'application/json';
    } else if (answer.text !== undefined) {
      body = answer.text;
      headers['content-type'] ??= 'text/plain; charset=utf-8';
    }
    res.writeHead(answer.status ?? 200, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    on(method, path, handler) {
      handlers.set(`${method.toUpperCase()} ${path}`, handler);
    },
    received(method, path) {
      return requests.filter((r) => r.method === method.toUpperCase() && r.path === path);
    },
    async close() {
      for (const res of pending) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
