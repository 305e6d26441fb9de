import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/** GET /v1/mcp_servers/{id}/tools: what a registered server offers, as the console shows it. */
describe.each(TEST_DBS)('MCP server tools list (%s)', (kind) => {
  let t: TestApp;
  let mcp: FakeMcpServer;
  beforeAll(async () => {
    [t, mcp] = await Promise.all([createTestApp(kind, { env: { AGENTRY_EGRESS_ALLOW: '127.0.0.1' } }), startFakeMcpServer({ auth: { header: 'authorization', value: 'Bearer k-1' } })]);
  });
  afterAll(async () => {
    await t?.close();
    await mcp?.close();
  });

  it('lists the tools with their schemas, marking those allowed_tools leaves out', async () => {
    const s = (await t.req('POST', '/v1/mcp_servers', { name: 'Calc', url: mcp.mcpUrl, auth_type: 'api_key', api_key: 'k-1', allowed_tools: ['add'] })).json();
    const r = await t.req('GET', `/v1/mcp_servers/${s.id}/tools`);
    expect(r.statusCode, r.body).toBe(200);
    const tools = r.json() as { name: string; allowed: boolean; input_schema: { properties: Record<string, unknown> } }[];
    const add = tools.find((x) => x.name === 'add')!;
    expect(add).toMatchObject({ description: 'Adds two numbers', allowed: true, read_only: false });
    expect(Object.keys(add.input_schema.properties).sort()).toEqual(['a', 'b']);
    expect(tools.find((x) => x.name === 'echo')!.allowed).toBe(false);
  });

  it('answers 502 with a readable message when the server refuses, 409 for OAuth servers, 404 across organizations', async () => {
    const wrong = (await t.req('POST', '/v1/mcp_servers', { name: 'Wrong key', url: mcp.mcpUrl, auth_type: 'api_key', api_key: 'nope' })).json();
    const r = await t.req('GET', `/v1/mcp_servers/${wrong.id}/tools`);
    expect(r.statusCode).toBe(502);
    expect(r.json().detail).toContain('Wrong key');
    expect(r.body).not.toContain('nope');
    const oauth = (await t.req('POST', '/v1/mcp_servers', { name: 'OAuth one', url: mcp.mcpUrl, auth_type: 'oauth2' })).json();
    expect((await t.req('GET', `/v1/mcp_servers/${oauth.id}/tools`)).statusCode).toBe(409);
    expect((await t.req('GET', '/v1/mcp_servers/missing/tools')).statusCode).toBe(404);
    expect((await t.req('GET', `/v1/mcp_servers/${wrong.id}/tools`, undefined, { 'x-api-key': t.keyB })).statusCode).toBe(404);
  });

  it('fails a server whose answer never ends, as JSON or as one endless event, and stops reading it', async () => {
    // 1 MiB every 50 ms until the socket closes: read whole (JSON) or as one unbounded event (SSE) by the MCP SDK, it
    // grew the process by the whole stream until the 15 s connect timeout.
    let sent = 0;
    const open = new Set<string>();
    const endless = createServer((req, res) => {
      req.resume();
      const sse = req.url === '/sse-mcp';
      res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
      res.write(sse ? 'event: message\ndata: {"jsonrpc":"2.0","id":0,"result":"' : '{"jsonrpc":"2.0","id":0,"result":"');
      const line = Buffer.alloc(1 << 20, 97);
      if (sse) line[line.length - 1] = 0x0a; // many data lines, never a blank line: one endless event
      open.add(req.url!);
      const timer = setInterval(() => {
        res.write(sse ? Buffer.concat([Buffer.from('data: '), line]) : line);
        sent += line.length;
      }, 50);
      res.on('close', () => {
        clearInterval(timer);
        open.delete(req.url!);
      });
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
      for (const path of ['/json-mcp', '/sse-mcp']) {
        sent = 0;
        const s = (await t.req('POST', '/v1/mcp_servers', { name: `Endless ${path}`, url: `${base}${path}` })).json();
        const started = Date.now();
        const r = await t.req('GET', `/v1/mcp_servers/${s.id}/tools`);
        expect(r.statusCode, r.body).toBe(502);
        expect(r.json().detail).toContain('the answer is larger than 10 MiB');
        expect(Date.now() - started).toBeLessThan(8000);
        await expect.poll(() => open.has(path)).toBe(false);
        expect(sent).toBeLessThan(40 << 20);
      }
    } finally {
      endless.closeAllConnections();
      await new Promise((r) => endless.close(r));
    }
  });
});
