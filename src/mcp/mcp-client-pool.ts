import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClientSdk, mcpClientSdkIfLoaded } from './mcp-sdk.js';
import { createHash } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Clock } from '../lib/clock.js';
import type { McpTransport } from './mcp.types.js';
import { describeMcpError } from './mcp-errors.js';
import { boundedResponse } from '../net/bounded-response.js';

/** Most bytes of one JSON answer, or of one event of an event stream, of an MCP server (src/net/bounded-response.ts). */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * Live MCP client sessions, shared by every run that talks to the same server with the same credentials.
 *
 * - A session is keyed by a hash of url, transport and headers (credentials included), so two users' OAuth
 *   tokens never share a session, and no credential is kept as a map key in clear.
 * - Tool lists are cached per session for `toolListTtlMs`; a session that closes (server restart, network drop) is
 *   dropped with its list, so the next use reconnects and lists the tools again.
 * - Idle sessions are closed after `idleMs`.
 */

export interface McpEndpoint {
  /** For messages: the server's display name. */
  name: string;
  url: string;
  transport: McpTransport;
  /** Every header sent, the Authorization header of api_key/oauth2 included. */
  headers: Record<string, string>;
}

export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** MCP annotation: the tool does not modify its environment. */
  readOnly: boolean;
}

export interface McpCallResult {
  isError: boolean;
  content: unknown[];
  structuredContent?: Record<string, unknown>;
}

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface McpClientPoolOptions {
  /** The egress-checked fetch every MCP request goes through. */
  fetch: FetchLike;
  clock: Clock;
  toolListTtlMs?: number;
  idleMs?: number;
  connectTimeoutMs?: number;
  callTimeoutMs?: number;
  /** The whole tool listing, every page included. */
  listTimeoutMs?: number;
}

/** Pages of one tool listing: a real server has a few; an endless cursor (empty pages too) must end (R2). */
const MAX_TOOL_PAGES = 100;

/** A listing that did not end within its bounds; its message completes "MCP server X failed while listing its tools: ". */
class McpListingTooLong extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpListingTooLong';
  }
}

interface Session {
  client?: Client;
  connecting?: Promise<Client>;
  /** The event stream was opened again under the client (the SSE transport reconnects by itself). */
  reconnected?: boolean;
  tools?: McpToolInfo[];
  toolsAt: number;
  lastUsed: number;
  /** An answer of the server passed the size limit (bounded-response.ts): the session was closed for it. */
  failure?: Error;
}

/** A failure talking to an MCP server; the message is written for users and the LLM. */
export class McpCallError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'McpCallError';
  }
}

export class McpClientPool {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly ttl: number;
  private readonly idle: number;
  private readonly connectTimeout: number;
  private readonly callTimeout: number;
  private readonly listTimeout: number;

  constructor(private readonly opts: McpClientPoolOptions) {
    this.ttl = opts.toolListTtlMs ?? 5 * 60_000;
    this.idle = opts.idleMs ?? 5 * 60_000;
    this.connectTimeout = opts.connectTimeoutMs ?? 15_000;
    this.callTimeout = opts.callTimeoutMs ?? 120_000;
    this.listTimeout = opts.listTimeoutMs ?? 60_000;
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, this.idle)).unref();
  }

  /** The server's tools, from the session's cache while it is fresh. Throws McpCallError with a readable message. */
  async listTools(ep: McpEndpoint, signal?: AbortSignal): Promise<McpToolInfo[]> {
    const session = this.session(ep);
    const now = this.opts.clock.now();
    if (session.client && session.tools && now - session.toolsAt < this.ttl) return session.tools;
    const client = await this.connect(ep, session, signal);
    try {
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      let pages = 0;
      // The whole listing has one deadline, each page the connect timeout: a server may not page for ever (R2).
      const deadline = AbortSignal.timeout(this.listTimeout);
      const listing = signal ? AbortSignal.any([signal, deadline]) : deadline;
      do {
        if (++pages > MAX_TOOL_PAGES) throw new McpListingTooLong(`it answered more than ${MAX_TOOL_PAGES} pages of tools`);
        let page: Awaited<ReturnType<Client['listTools']>>;
        try {
          page = await client.listTools(cursor ? { cursor } : {}, { signal: listing, timeout: this.connectTimeout });
        } catch (e) {
          if (deadline.aborted && !signal?.aborted) throw new McpListingTooLong(`its tool list did not end within ${this.listTimeout / 1000} s`);
          throw e;
        }
        for (const t of page.tools) {
          tools.push({
            name: t.name,
            description: t.description ?? t.title ?? '',
            inputSchema: (t.inputSchema as Record<string, unknown>) ?? { type: 'object' },
            readOnly: t.annotations?.readOnlyHint === true,
          });
        }
        cursor = page.nextCursor;
      } while (cursor && tools.length < 10_000);
      session.tools = tools;
      session.toolsAt = this.opts.clock.now();
      return tools;
    } catch (e) {
      const cause = session.failure ?? e;
      this.drop(ep, session);
      throw new McpCallError(describeMcpError(ep, cause, 'listing its tools'), { cause });
    }
  }

  /** Calls one tool. A session the server no longer knows is reopened once; other failures are reported as they are. */
  async callTool(ep: McpEndpoint, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    for (let attempt = 0; ; attempt++) {
      const session = this.session(ep);
      const client = await this.connect(ep, session, signal);
      try {
        const r = await client.callTool({ name, arguments: args }, undefined, { signal, timeout: this.callTimeout, resetTimeoutOnProgress: true });
        return {
          isError: r.isError === true,
          content: Array.isArray(r.content) ? r.content : [],
          structuredContent: r.structuredContent as Record<string, unknown> | undefined,
        };
      } catch (e) {
        if (session.failure) {
          this.drop(ep, session);
          throw new McpCallError(describeMcpError(ep, session.failure, `calling ${name}`), { cause: session.failure });
        }
        // The server answered with a JSON-RPC error (bad arguments, unknown tool): the session itself is fine.
        if (isProtocolAnswer(e)) throw new McpCallError(describeMcpError(ep, e, `calling ${name}`), { cause: e });
        this.drop(ep, session);
        // Only a request the server never accepted is sent again: a tool call may not be idempotent.
        if (attempt === 0 && isSessionGone(e) && !signal?.aborted) continue;
        throw new McpCallError(describeMcpError(ep, e, `calling ${name}`), { cause: e });
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.client?.close().catch(() => {})));
  }

  private key(ep: McpEndpoint): string {
    const headers = Object.entries(ep.headers)
      .map(([k, v]) => [k.toLowerCase(), v])
      .sort();
    return createHash('sha256').update(JSON.stringify([ep.url, ep.transport, headers])).digest('base64url');
  }

  private session(ep: McpEndpoint): Session {
    const key = this.key(ep);
    let s = this.sessions.get(key);
    if (s?.reconnected && !s.connecting) {
      // The server may have restarted and forgotten the session: start a fresh one (initialize, list tools again).
      this.drop(ep, s);
      s = undefined;
    }
    if (!s) {
      s = { toolsAt: 0, lastUsed: this.opts.clock.now() };
      this.sessions.set(key, s);
    }
    s.lastUsed = this.opts.clock.now();
    return s;
  }

  private drop(ep: McpEndpoint, session: Session): void {
    const key = this.key(ep);
    if (this.sessions.get(key) === session) this.sessions.delete(key);
    const client = session.client;
    session.client = undefined;
    session.tools = undefined;
    void client?.close().catch(() => {});
  }

  private async connect(ep: McpEndpoint, session: Session, signal?: AbortSignal): Promise<Client> {
    if (session.client) return session.client;
    session.connecting ??= this.open(ep, session).finally(() => (session.connecting = undefined));
    const connecting = session.connecting;
    if (!signal) return connecting;
    return new Promise<Client>((resolve, reject) => {
      const onAbort = () => reject(signal.reason ?? new Error('aborted'));
      signal.addEventListener('abort', onAbort, { once: true });
      connecting.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private async open(ep: McpEndpoint, session: Session): Promise<Client> {
    const url = new URL(ep.url);
    const { Client, SSEClientTransport, StreamableHTTPClientTransport } = await mcpClientSdk();
    const requestInit: RequestInit = { headers: ep.headers };
    // Watches the transport's GET event streams: a second one means the stream dropped and was reopened.
    let streams = 0;
    const fetch: FetchLike = (input, init) => {
      const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      if (method === 'GET' && ++streams > 1) {
        session.reconnected = true;
        session.tools = undefined;
      }
      return this.opts.fetch(input, init).then((res) => boundedResponse(res, MAX_MCP_MESSAGE_BYTES, tooLarge));
    };
    // Ends the session at once (its pending requests fail) and the connect below, instead of waiting for timeouts.
    let rejectConnect: (e: Error) => void = () => {};
    const tooLargeFailure = new Promise<never>((_, reject) => (rejectConnect = reject));
    tooLargeFailure.catch(() => {});
    const tooLarge = (e: Error) => {
      session.failure = e;
      rejectConnect(e);
      void client.close().catch(() => {});
    };
    const transport: Transport =
      ep.transport === 'sse' ? new SSEClientTransport(url, { requestInit, fetch }) : new StreamableHTTPClientTransport(url, { requestInit, fetch });
    const client = new Client({ name: 'agentry', version: '1.0.0' });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.connect(transport, { timeout: this.connectTimeout }),
        tooLargeFailure,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(this.connectTimeout / 1000)} s`)), this.connectTimeout);
        }),
      ]);
    } catch (e) {
      void client.close().catch(() => {});
      this.drop(ep, session);
      throw new McpCallError(describeMcpError(ep, e, 'connecting'), { cause: e });
    } finally {
      clearTimeout(timer);
    }
    // A closed session (server restart, dropped stream) is forgotten with its tool list: the next use reconnects.
    client.onclose = () => {
      if (session.client === client) {
        session.client = undefined;
        session.tools = undefined;
      }
    };
    session.client = client;
    session.tools = undefined;
    return client;
  }

  private sweep(): void {
    const now = this.opts.clock.now();
    for (const [key, s] of this.sessions) {
      if (now - s.lastUsed > this.idle && !s.connecting) {
        this.sessions.delete(key);
        void s.client?.close().catch(() => {});
      }
    }
  }
}

function isProtocolAnswer(e: unknown): boolean {
  const sdk = mcpClientSdkIfLoaded();
  return sdk !== undefined && e instanceof sdk.McpError && e.code !== sdk.ErrorCode.ConnectionClosed && e.code !== sdk.ErrorCode.RequestTimeout;
}

/** A streamable-HTTP session the server has forgotten answers 404: reconnecting is the documented remedy. */
function isSessionGone(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return code === 404 || (e instanceof Error && /not connected/i.test(e.message));
}
