import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The machinery shared by the scripted LLM servers (openai-server.ts, anthropic-server.ts): a real HTTP server on
 * 127.0.0.1 that records every request and answers from a queue of scripted replies, or from a handler function
 * when the queue is empty. Use the two servers, not this file, from tests.
 */

/** One scripted answer of the model. */
export interface ScriptedReply {
  /** Assistant text (streamed in small chunks when the request asks for a stream). */
  text?: string;
  /** A thinking block before the text (Anthropic's extended thinking; the OpenAI fake ignores it). */
  thinking?: { text: string; signature: string };
  /** Tool calls the model makes; `id` is generated when absent. */
  toolCalls?: { id?: string; name: string; arguments: Record<string, unknown> | string }[];
  /** Token usage reported; defaults to 10 prompt and 5 completion tokens. */
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  /** A non-2xx status answers with the provider's error body (message `error`) instead of a completion. */
  status?: number;
  error?: string;
  /** Extra response headers, e.g. `{ 'retry-after': '0' }`. */
  headers?: Record<string, string>;
  /** Waits this long before answering (ends early when the client disconnects): for stop/abort tests. */
  delayMs?: number;
  /** Overrides the finish reason the server reports. */
  finishReason?: string;
  /** A streamed answer that sends its headers and then nothing, until the client goes away. */
  stallAfterHeaders?: boolean;
  /** A streamed answer that never ends: a `delta` of text every `everyMs`, until the client goes away. */
  endless?: { everyMs: number; delta?: string };
}

export type ReplyHandler = (req: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body exactly as the client sent it. */
  body: any;
  stream: boolean;
  /** Names of the tools offered to the model. */
  tools: string[];
  /** System prompt (OpenAI: the system/developer messages joined; Anthropic: `system`). */
  system: string;
  /** Text of the last user message. */
  lastUserText: string;
}

export interface ScriptedLlmServer {
  /** Base URL to use as an agent's `llm_api_base`, ending in `/v1`. */
  baseUrl: string;
  /** Every request received, oldest first. */
  requests: RecordedRequest[];
  /** Queues replies, answered in order, one per request. */
  reply(...replies: ScriptedReply[]): void;
  /** Answers requests when the queue is empty; null restores the default (500 "no scripted reply"). */
  handle(handler: ReplyHandler | null): void;
  /** Resolves when at least `n` requests have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface Protocol {
  /** Does this request path belong to the protocol (e.g. POST /v1/chat/completions)? */
  matches(method: string, path: string): boolean;
  describe(body: any): Pick<RecordedRequest, 'stream' | 'tools' | 'system' | 'lastUserText'>;
  errorBody(status: number, message: string): unknown;
  json(reply: ScriptedReply, body: any, ids: () => string): unknown;
  /** Writes the whole SSE answer. */
  stream(reply: ScriptedReply, body: any, ids: () => string, write: (event: string | null, data: unknown) => void): void;
  /** One event carrying a text delta, for `endless` answers; a protocol without it does not offer them. */
  textDelta?(text: string, body: any): unknown;
}

/**
 * A route beside the protocol's completions (e.g. OpenAI's /v1/moderations): matched on method and path, answered
 * with a JSON status and body; not recorded in `requests`, which holds the LLM calls only.
 */
export interface SideRoute {
  matches(method: string, path: string): boolean;
  answer(body: any, headers: Record<string, string | string[] | undefined>): { status: number; body: unknown } | Promise<{ status: number; body: unknown }>;
}

export const DEFAULT_USAGE = { prompt_tokens: 10, completion_tokens: 5 };

/** Splits text the way a model streams it: several small deltas. */
export function chunksOf(text: string, size = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function argumentsText(a: Record<string, unknown> | string): string {
  return typeof a === 'string' ? a : JSON.stringify(a);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

export async function startScriptedServer(protocol: Protocol, label: string, sideRoutes: SideRoute[] = []): Promise<ScriptedLlmServer> {
  const queue: ScriptedReply[] = [];
  let handler: ReplyHandler | undefined;
  const requests: RecordedRequest[] = [];
  const waiters: (() => void)[] = [];
  let counter = 0;
  const ids = () => `${label}_${++counter}`;

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const side = sideRoutes.find((r) => r.matches(req.method ?? 'GET', url.pathname));
    if (side) {
      let sideBody: any;
      try {
        sideBody = JSON.parse(await readBody(req));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(protocol.errorBody(400, 'body is not JSON')));
        return;
      }
      const out = await side.answer(sideBody, req.headers);
      res.writeHead(out.status, { 'content-type': 'application/json' }).end(JSON.stringify(out.body));
      return;
    }
    if (!protocol.matches(req.method ?? 'GET', url.pathname)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(protocol.errorBody(404, `${label} fake: no route ${req.method} ${url.pathname}`)));
      return;
    }
    const raw = await readBody(req);
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(protocol.errorBody(400, 'body is not JSON')));
      return;
    }
    const recorded: RecordedRequest = { method: req.method ?? 'POST', path: url.pathname, headers: req.headers, body, ...protocol.describe(body) };
    requests.push(recorded);
    waiters.splice(0).forEach((w) => w());

    const reply: ScriptedReply = queue.shift() ?? (handler ? await handler(recorded) : { status: 500, error: `${label} fake: no scripted reply for this request` });
    if (reply.delayMs) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, reply.delayMs);
        res.on('close', () => {
          clearTimeout(t);
          resolve();
        });
      });
      if (res.destroyed || res.writableEnded) return;
    }
    const headers = reply.headers ?? {};
    if (reply.status && (reply.status < 200 || reply.status > 299)) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(protocol.errorBody(reply.status, reply.error ?? 'scripted error')));
      return;
    }
    if (recorded.stream && (reply.stallAfterHeaders || reply.endless)) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
      res.flushHeaders();
      const endless = reply.endless;
      const timer = endless
        ? setInterval(() => res.write(`data: ${JSON.stringify(protocol.textDelta!(endless.delta ?? 'x', body))}\n\n`), endless.everyMs)
        : undefined;
      await new Promise<void>((resolve) => res.on('close', resolve));
      clearInterval(timer);
      return;
    }
    if (recorded.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
      protocol.stream(reply, body, ids, (event, data) => {
        res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
      });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(protocol.json(reply, body, ids)));
  };

  const server = createServer((req, res) => {
    answer(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify(protocol.errorBody(500, `${label} fake failed: ${String(e)}`)));
    });
  });
  // Longer than any client's idle keep-alive, so a client never reuses a socket the server is just closing.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...r) => void queue.push(...r),
    handle: (h) => void (handler = h ?? undefined),
    async waitForRequests(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > deadline) throw new Error(`${label} fake: ${requests.length} requests after ${timeoutMs} ms, expected ${n}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
