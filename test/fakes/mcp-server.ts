import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/**
 * A scripted MCP server on 127.0.0.1 for tests, speaking both transports:
 * streamable HTTP at `/mcp` (stateless) and the older SSE transport at `/sse` + `/messages`.
 *
 * Tools: `add {a,b}`, `echo {text}`, `whoami {}` (returns the Authorization header it saw, so a test can check
 * which credential reached it) and `fail {}` (a tool-level error). `auth` makes every request need a header.
 */

export interface FakeMcpOptions {
  /** Every request must carry this exact header value, else 401. */
  auth?: { header: string; value: string };
  /** Every request's Authorization header must pass this, else 401 (with `wwwAuthenticate`, if given). */
  bearer?: { accepts: (authorization: string | undefined) => boolean; wwwAuthenticate?: (base: string) => string };
  /** JSON documents served by GET without credentials (OAuth protected resource metadata), by path; given the base URL. */
  documents?: (base: string) => Record<string, unknown>;
  /** Extra tools by name -> returned text. */
  extraTools?: Record<string, string>;
  /** Answers tools/list page by page instead (a server that paginates, or one whose cursor never ends). */
  listPage?: (cursor: string | undefined) => { tools: { name: string; description?: string }[]; nextCursor?: string; delayMs?: number };
}

export interface FakeMcpServer {
  /** http://127.0.0.1:<port> */
  base: string;
  /** Streamable HTTP endpoint. */
  mcpUrl: string;
  /** SSE endpoint. */
  sseUrl: string;
  /** Tool calls received, in order. */
  calls: { tool: string; args: Record<string, unknown>; authorization?: string }[];
  /** Requests refused for missing or wrong credentials. */
  unauthorized: number;
  /** Connections (initialize handshakes) seen. */
  initializations: number;
  /** tools/list requests answered by `listPage`. */
  listRequests: number;
  /** Makes the tool list differ from now on (to observe caching and refresh). */
  addTool(name: string, text: string): void;
  /** Ends every open SSE session (as a server restart would), keeping the server up. */
  dropSessions(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeMcpServer(opts: FakeMcpOptions = {}): Promise<FakeMcpServer> {
  const extra: Record<string, string> = { ...(opts.extraTools ?? {}) };
  const sseSessions = new Map<string, SSEServerTransport>();
  const state: Pick<FakeMcpServer, 'calls' | 'unauthorized' | 'initializations' | 'listRequests'> = { calls: [], unauthorized: 0, initializations: 0, listRequests: 0 };

  function buildServer(authorization: () => string | undefined): McpServer {
    const server = new McpServer({ name: 'fake-mcp', version: '1.0.0' });
    const record = (tool: string, args: Record<string, unknown>) => state.calls.push({ tool, args, authorization: authorization() });
    server.registerTool(
      'add',
      { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        record('add', { a, b });
        return { content: [{ type: 'text', text: String(a + b) }] };
      },
    );
    server.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string() } }, async ({ text }) => {
      record('echo', { text });
      return { content: [{ type: 'text', text }] };
    });
    server.registerTool('whoami', { description: 'Shows the credential the server received' }, async () => {
      record('whoami', {});
      return { content: [{ type: 'text', text: authorization() ?? 'anonymous' }] };
    });
    server.registerTool('fail', { description: 'Always fails' }, async () => {
      record('fail', {});
      return { isError: true, content: [{ type: 'text', text: 'the tool failed on purpose' }] };
    });
    for (const [name, text] of Object.entries(extra)) {
      server.registerTool(name, { description: `Extra tool ${name}` }, async () => {
        record(name, {});
        return { content: [{ type: 'text', text }] };
      });
    }
    const listPage = opts.listPage;
    if (listPage) {
      server.server.setRequestHandler(ListToolsRequestSchema, async (req) => {
        state.listRequests++;
        const page = listPage(req.params?.cursor);
        if (page.delayMs) await new Promise((r) => setTimeout(r, page.delayMs));
        return { tools: page.tools.map((t) => ({ ...t, inputSchema: { type: 'object' as const } })), nextCursor: page.nextCursor };
      });
    }
    return server;
  }

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? JSON.parse(text) : undefined;
  }

  function authorized(req: IncomingMessage, res: ServerResponse): boolean {
    if (opts.bearer) {
      if (opts.bearer.accepts(req.headers.authorization)) return true;
      state.unauthorized++;
      const challenge = opts.bearer.wwwAuthenticate ? { 'www-authenticate': opts.bearer.wwwAuthenticate(base) } : {};
      res.writeHead(401, { 'content-type': 'application/json', ...challenge }).end(JSON.stringify({ error: 'unauthorized' }));
      return false;
    }
    if (!opts.auth) return true;
    if (req.headers[opts.auth.header.toLowerCase()] === opts.auth.value) return true;
    state.unauthorized++;
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
    return false;
  }

  let base = '';
  const http: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://x');
      const doc = req.method === 'GET' ? opts.documents?.(base)[url.pathname] : undefined;
      if (doc !== undefined) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      if (!authorized(req, res)) return;
      const authorization = () => (req.headers.authorization as string | undefined) ?? undefined;
      if (url.pathname === '/mcp') {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        const body = await readBody(req);
        if ((body as { method?: string })?.method === 'initialize') state.initializations++;
        // Stateless: a fresh server and transport per request.
        const server = buildServer(authorization);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      if (url.pathname === '/sse' && req.method === 'GET') {
        state.initializations++;
        const transport = new SSEServerTransport('/messages', res);
        sseSessions.set(transport.sessionId, transport);
        res.on('close', () => sseSessions.delete(transport.sessionId));
        // The credential of the stream's opening request identifies the caller for the whole session.
        const server = buildServer(() => authorization());
        await server.connect(transport);
        return;
      }
      if (url.pathname === '/messages' && req.method === 'POST') {
        const transport = sseSessions.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) return void res.writeHead(404).end('unknown session');
        await transport.handlePostMessage(req, res, await readBody(req));
        return;
      }
      res.writeHead(404).end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const { port } = http.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  return {
    base,
    mcpUrl: `${base}/mcp`,
    sseUrl: `${base}/sse`,
    get calls() {
      return state.calls;
    },
    get unauthorized() {
      return state.unauthorized;
    },
    get initializations() {
      return state.initializations;
    },
    get listRequests() {
      return state.listRequests;
    },
    addTool(name, text) {
      extra[name] = text;
    },
    async dropSessions() {
      for (const t of [...sseSessions.values()]) await t.close();
      sseSessions.clear();
    },
    async close() {
      for (const t of sseSessions.values()) await t.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
