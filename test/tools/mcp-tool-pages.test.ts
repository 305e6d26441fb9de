import { afterEach, describe, expect, it } from 'vitest';
import { McpClientPool } from '../../src/mcp/mcp-client-pool.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';

/** Listing an MCP server's tools page by page (tools/list with nextCursor) ends, whatever the server answers. */
describe('MCP tool listing bounds', () => {
  let srv: FakeMcpServer | undefined;
  let pool: McpClientPool | undefined;
  afterEach(async () => {
    await pool?.close();
    await srv?.close();
  });
  const endpoint = (s: FakeMcpServer) => ({ name: 'Paged', url: s.mcpUrl, transport: 'streamable-http' as const, headers: {} });

  it('lists every page of a server that paginates', async () => {
    srv = await startFakeMcpServer({
      listPage: (cursor) => {
        const n = cursor ? Number(cursor) : 0;
        return { tools: [{ name: `tool_${n}` }], nextCursor: n < 2 ? String(n + 1) : undefined };
      },
    });
    pool = new McpClientPool({ fetch: globalThis.fetch, clock: { now: () => Date.now() } });
    expect((await pool.listTools(endpoint(srv))).map((t) => t.name)).toEqual(['tool_0', 'tool_1', 'tool_2']);
  });

  it('gives up on a cursor that never ends, even with empty pages, after 100 pages', async () => {
    let n = 0;
    srv = await startFakeMcpServer({ listPage: () => ({ tools: [], nextCursor: `more-${++n}` }) });
    pool = new McpClientPool({ fetch: globalThis.fetch, clock: { now: () => Date.now() } });
    await expect(pool.listTools(endpoint(srv))).rejects.toThrow("MCP server 'Paged' (http://127.0.0.1");
    await expect(pool.listTools(endpoint(srv))).rejects.toThrow('failed while listing its tools: it answered more than 100 pages of tools');
    expect(srv.listRequests).toBe(200);
  }, 30_000);

  it('gives up on a listing that does not end within its time limit', async () => {
    srv = await startFakeMcpServer({ listPage: (cursor) => ({ tools: [{ name: `t${cursor ?? 0}` }], nextCursor: `${Number(cursor ?? 0) + 1}`, delayMs: 150 }) });
    pool = new McpClientPool({ fetch: globalThis.fetch, clock: { now: () => Date.now() }, listTimeoutMs: 600 });
    const started = Date.now();
    await expect(pool.listTools(endpoint(srv))).rejects.toThrow('its tool list did not end within 0.6 s');
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(srv.listRequests).toBeLessThan(10);
  });
});
