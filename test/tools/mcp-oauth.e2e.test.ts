import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createLogger } from '../../src/lib/logger.js';
import { sealState } from '../../src/mcp/mcp-oauth-state.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';
import { startFakeOAuthServer, type FakeOAuthServer } from '../fakes/oauth-server.js';
import { startOpenAIServer, type OpenAIServer } from '../fakes/openai-server.js';
import { fetchPoster, postAgent, scriptedAgentFields } from '../support/agents.js';
import { createTestEnv, TEST_DBS, type TestEnv } from '../support/harness.js';

type Ev = { type: string; data: Record<string, unknown> };

const CLIENT_ID = 'agentry-crm-client';
const CLIENT_SECRET = 'client-secret-9f3b7c1e';

/**
 * The interactive OAuth flow of registry MCP servers (authorization code + PKCE), end to end over sockets: a scripted
 * authorization server (metadata, PKCE- and client-checking token endpoint), a scripted MCP server that accepts only
 * the tokens it issued (401 with WWW-Authenticate naming its resource metadata), the scripted LLM, and the service
 * with its logs captured.
 */
describe.each(TEST_DBS)('MCP interactive OAuth (%s)', (kind) => {
  let env: TestEnv;
  let server: RunningServer;
  let llm: OpenAIServer;
  let as: FakeOAuthServer;
  let mcp: FakeMcpServer;
  let key: string;
  let keyB: string;
  let orgA: string;
  let orgB: string;
  let serverId: string;
  let agentId: string;
  const logs: string[] = [];

  beforeAll(async () => {
    [llm, as] = await Promise.all([startOpenAIServer(), startFakeOAuthServer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, authMethod: 'client_secret_post', expiresIn: 3600 })]);
    mcp = await startFakeMcpServer({
      bearer: {
        accepts: (authorization) => as.validAccessTokens.has(authorization?.replace(/^Bearer /, '') ?? ''),
        wwwAuthenticate: (base) => `Bearer resource_metadata="${base}/meta/prm", scope="crm.read"`,
      },
      documents: (base) => ({ '/meta/prm': { resource: `${base}/mcp`, authorization_servers: [as.base], scopes_supported: ['crm.read', 'crm.admin'] } }),
    });
    env = await createTestEnv(kind, { AGENTRY_EGRESS_ALLOW: '127.0.0.1', AGENTRY_SYNC_TIMEOUT_MS: '20000' });
    const config = loadConfig({ ...env.env, AGENTRY_API_PORT: '0', AGENTRY_WEBHOOK_PORT: '0' });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString('utf8'));
        done();
      },
    });
    server = await startServer(config, await createContainer(config, { log: createLogger('debug', 'json', sink) }));
    const a = await server.container.orgs.createApiKey('org-a');
    const b = await server.container.orgs.createApiKey('org-b');
    [key, keyB, orgA, orgB] = [a.key, b.key, a.organization.id, b.organization.id];
    const s = await call('POST', '/v1/mcp_servers', {
      name: 'crm',
      url: mcp.mcpUrl,
      auth_type: 'oauth2',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      additional_scopes: ['crm.write', 'offline_access'],
    });
    expect(s.status, JSON.stringify(s.json)).toBe(201);
    expect(s.json).toMatchObject({ client_id: CLIENT_ID, client_secret: '********', additional_scopes: ['crm.write', 'offline_access'], share_user_token_across_other_agents: true });
    serverId = s.json.id;
    agentId = (await postAgent(fetchPoster(server.apiUrl!, key), scriptedAgentFields(llm.baseUrl, { tools: [{ type: 'mcp', mcp_id: serverId }] }))).id as string;
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([llm?.close(), as?.close(), mcp?.close()]);
    await env?.cleanup();
  });

  async function call(method: string, path: string, body?: unknown, k = key): Promise<{ status: number; json: any; text: string }> {
    const r = await fetch(server.apiUrl + path, {
      method,
      headers: { 'x-api-key': k, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: r.status, json, text };
  }
  /** A run of `user` in which the model calls `tool` once, then answers. */
  async function run(user: string, tool: string, args: Record<string, unknown> = {}, agent = agentId) {
    llm.reply({ toolCalls: [{ name: tool, arguments: args }] }, { text: 'done' });
    const r = await call('POST', `/v1/agents/${agent}/invoke`, { input: { text: 'Use the CRM', user: { id: user } } });
    expect(r.json, JSON.stringify(r.json)).toMatchObject({ status: 'completed' });
    const toolMessages = llm.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content as string);
    const events = (await call('GET', `/v1/tasks/${r.json.id}/events`)).json as Ev[];
    return { task: r.json, toolMessages, events, authEvents: events.filter((e) => e.type === 'auth_event').map((e) => e.data) };
  }
  /** Follows an authorization link as the user's browser: the scripted server approves and redirects to the callback. */
  async function consent(link: string): Promise<{ callback: URL; status: number; page: string }> {
    const approve = await fetch(link, { redirect: 'manual' });
    expect(approve.status).toBe(302);
    const callback = new URL(approve.headers.get('location')!);
    return { callback, ...(await openCallback(callback.search)) };
  }
  /** As a browser opens it (Accept: text/html): the page. */
  async function openCallback(search: string): Promise<{ status: number; page: string }> {
    const r = await fetch(`${server.apiUrl}/v1/mcp_servers/oauth/callback${search}`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('cache-control')).toBe('no-store');
    return { status: r.status, page: await r.text() };
  }
  const storedUsers = async () => ((await call('GET', `/v1/mcp_servers/${serverId}/user_tokens`)).json.items as { user_id: string }[]).map((i) => i.user_id);
  const linkFor = async (user: string) => (await run(user, 'crm_unavailable')).authEvents[0]!.authorization_url as string;

  it('a run without a token offers an authorization link: discovered endpoint, PKCE S256, scope with additional_scopes, resource, sealed state', async () => {
    const probesBefore = mcp.unauthorized;
    const r = await run('alice', 'crm_unavailable');
    expect(llm.requests.at(-2)!.tools).not.toContain('crm_add');
    expect(r.authEvents).toHaveLength(2);
    const ev = r.authEvents[0]!;
    expect(ev).toMatchObject({ kind: 'mcp_oauth', status: 'authorization_required', graph_item_id: serverId, user_id: 'alice' });
    const link = new URL(ev.authorization_url as string);
    expect(`${link.origin}${link.pathname}`).toBe(`${as.base}/authorize`);
    const p = Object.fromEntries(link.searchParams);
    expect(p).toMatchObject({
      response_type: 'code',
      client_id: CLIENT_ID,
      code_challenge_method: 'S256',
      redirect_uri: `${server.container.urls.api}/v1/mcp_servers/oauth/callback`,
      scope: 'crm.read crm.write offline_access',
      resource: mcp.mcpUrl,
    });
    expect(p.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.state!.length).toBeGreaterThan(40);
    // The state is sealed: neither the verifier nor the ids are readable in it.
    expect(p.state).not.toContain('alice');
    expect(p.state).not.toContain(serverId);
    // Discovery: the server's 401 named its resource metadata; the authorization server's metadata came next.
    expect(mcp.unauthorized).toBeGreaterThan(probesBefore);
    expect(as.metadataRequests).toContain('/.well-known/oauth-authorization-server');
    // The model and the user see the link in the stand-in's text.
    expect(r.toolMessages[0]).toContain(`the user can authorize it by opening ${ev.authorization_url}`);
    expect(r.toolMessages[0]).toContain(`pass an access token in user_tokens under the key '${serverId}'`);
    expect(await storedUsers()).not.toContain('alice');
  });

  it('the callback with a good state exchanges the code (PKCE verifier, client_secret_post) and stores the token; the next run uses it', async () => {
    const link = await linkFor('alice');
    const { callback, status, page } = await consent(link);
    expect(`${callback.origin}${callback.pathname}`).toBe(`${server.container.urls.api}/v1/mcp_servers/oauth/callback`);
    expect(status, page).toBe(200);
    expect(page).toContain('MCP server &#39;crm&#39; is now authorized for user &#39;alice&#39;');
    const exchange = as.tokenRequests.at(-1)!;
    expect(exchange).toMatchObject({ grant_type: 'authorization_code', ok: true });
    expect(exchange.params).toMatchObject({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, resource: mcp.mcpUrl, redirect_uri: new URL(link).searchParams.get('redirect_uri') });
    const listed = (await call('GET', `/v1/mcp_servers/${serverId}/user_tokens`)).json.items.find((i: { user_id: string }) => i.user_id === 'alice');
    expect(Date.parse(listed.expires_at)).toBeGreaterThan(Date.now() + 3000_000);

    const ok = await run('alice', 'crm_add', { a: 2, b: 3 });
    expect(ok.toolMessages).toEqual(['5']);
    expect(ok.authEvents).toEqual([]);
    expect(as.validAccessTokens.has(mcp.calls.at(-1)!.authorization!.replace('Bearer ', ''))).toBe(true);

    // The same link cannot be used twice: the code is spent, nothing changes.
    const again = await openCallback(callback.search);
    expect(again.status).toBe(400);
    expect(again.page).toContain('did not exchange the code');
  });

  it('a stored token the server refuses gives token_rejected with a new authorization link', async () => {
    expect((await call('PUT', `/v1/mcp_servers/${serverId}/user_tokens/erin`, { access_token: 'not-issued-by-the-server' })).status).toBe(201);
    const r = await run('erin', 'crm_unavailable');
    expect(r.authEvents[0]).toMatchObject({ status: 'token_rejected', token_source: 'stored', user_id: 'erin' });
    expect(r.authEvents[0]!.authorization_url).toMatch(new RegExp(`^${as.base}/authorize\\?`));
    expect(r.toolMessages[0]).toMatch(/refused the credentials.*the user can authorize it again by opening http/);
    expect((await consent(r.authEvents[0]!.authorization_url as string)).status).toBe(200);
    expect((await run('erin', 'crm_add', { a: 3, b: 3 })).toolMessages).toEqual(['6']);
  });

  it('refuses a tampered, expired, foreign or error callback, and stores nothing', async () => {
    const link = new URL(await linkFor('bob'));
    const state = link.searchParams.get('state')!;
    const tampered = state.slice(0, 20) + (state[20] === 'A' ? 'B' : 'A') + state.slice(21);
    const box = server.container.secretBox;
    const base = { serverId, userId: 'bob', agentId, clientId: CLIENT_ID, codeVerifier: 'v'.repeat(43), redirectUri: link.searchParams.get('redirect_uri')! };
    const expired = sealState(box, { ...base, organizationId: orgA, expiresAt: Date.now() - 1000 });
    // A state for organization B naming A's server: B cannot reach A's server through it.
    const foreign = sealState(box, { ...base, organizationId: orgB, expiresAt: Date.now() + 60_000 });
    const q = (s: string, extra = 'code=whatever') => `?${extra}&state=${encodeURIComponent(s)}`;
    const cases: [string, string, RegExp][] = [
      ['tampered', q(tampered), /not one this service issued/],
      ['expired', q(expired), /link expired/],
      ['other organization', q(foreign), /no longer exists/],
      ['error from the server', q(state, 'error=access_denied&error_description=The+user+said+no'), /answered access_denied: The user said no/],
      ['no state', '?code=whatever', /state parameter is missing/],
      ['a code the server never issued', q(state, 'code=forged-code'), /did not exchange the code: .*unknown or used code/],
    ];
    for (const [label, search, why] of cases) {
      const r = await openCallback(search);
      expect(r.status, label).toBe(400);
      expect(r.page, label).toMatch(why);
      expect(r.page, label).toContain('Nothing was stored');
    }
    // Not a browser: the API's error shape.
    const json = await fetch(`${server.apiUrl}/v1/mcp_servers/oauth/callback${q(expired)}`);
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({ detail: 'Nothing was stored: the authorization link expired: ask the agent again for a new one' });
    expect(await storedUsers()).not.toContain('bob');
    // B's key sees nothing of A's server either.
    expect((await call('GET', `/v1/mcp_servers/${serverId}/user_tokens`, undefined, keyB)).status).toBe(404);
  });

  it('an expired stored token is renewed with its refresh token before the run gives up; a revoked refresh token offers a new link', async () => {
    await consent(await linkFor('carol'));
    const expire = () =>
      server.container.db.kysely.updateTable('mcp_user_tokens').set({ expires_at: Date.now() - 60_000 }).where('mcp_server_id', '=', serverId).where('user_id', '=', 'carol').execute();
    await expire();
    const refreshesBefore = as.tokenRequests.filter((t) => t.grant_type === 'refresh_token').length;
    const ok = await run('carol', 'crm_add', { a: 1, b: 1 });
    expect(ok.toolMessages).toEqual(['2']);
    const refreshes = as.tokenRequests.filter((t) => t.grant_type === 'refresh_token');
    expect(refreshes.length).toBe(refreshesBefore + 1);
    expect(refreshes.at(-1)).toMatchObject({ ok: true, params: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, resource: mcp.mcpUrl } });
    const listed = (await call('GET', `/v1/mcp_servers/${serverId}/user_tokens`)).json.items.find((i: { user_id: string }) => i.user_id === 'carol');
    expect(Date.parse(listed.expires_at)).toBeGreaterThan(Date.now());

    await expire();
    as.revokeRefreshTokens();
    const refused = await run('carol', 'crm_unavailable');
    expect(refused.toolMessages[0]).toMatch(/the token stored for user 'carol' expired at .*renewing it with its refresh token failed: the refresh was refused: .*refresh token revoked/);
    expect(refused.authEvents[0]).toMatchObject({ status: 'authorization_required', stored_token: 'expired', user_id: 'carol' });
    expect(refused.authEvents[0]!.authorization_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
  });

  it('share_user_token_across_other_agents false: a token obtained through one agent serves that agent only', async () => {
    const other = (await postAgent(fetchPoster(server.apiUrl!, key), scriptedAgentFields(llm.baseUrl, { tools: [{ type: 'mcp', mcp_id: serverId }] }))).id as string;
    expect((await call('PATCH', `/v1/mcp_servers/${serverId}`, { share_user_token_across_other_agents: false })).json).toMatchObject({ share_user_token_across_other_agents: false });
    try {
      // alice's shared token (from the earlier test) no longer serves: each agent needs its own.
      const first = await run('alice', 'crm_unavailable');
      expect(first.authEvents[0]).toMatchObject({ status: 'authorization_required', user_id: 'alice', token_user_id: `${agentId}_alice` });
      expect(first.toolMessages[0]).toContain(`PUT /v1/mcp_servers/${serverId}/user_tokens/${agentId}_{user_id}`);
      const { page } = await consent(first.authEvents[0]!.authorization_url as string);
      expect(page).toContain('(for the agent that asked only)');
      expect(await storedUsers()).toContain(`${agentId}_alice`);

      expect((await run('alice', 'crm_add', { a: 4, b: 4 })).toolMessages).toEqual(['8']);
      const elsewhere = await run('alice', 'crm_unavailable', {}, other);
      expect(elsewhere.authEvents[0]).toMatchObject({ status: 'authorization_required', user_id: 'alice', token_user_id: `${other}_alice` });
      expect(llm.requests.at(-2)!.tools).not.toContain('crm_add');
    } finally {
      await call('PATCH', `/v1/mcp_servers/${serverId}`, { share_user_token_across_other_agents: true });
    }
    // Shared again: alice's own token serves every agent.
    expect((await run('alice', 'crm_add', { a: 1, b: 2 }, other)).toolMessages).toEqual(['3']);
  });

  it('authenticates at the token endpoint as the metadata says (client_secret_basic; a public client sends no secret), discovering via the well-known path', async () => {
    for (const [method, secret] of [['client_secret_basic', 'basic-secret-5e1d'], ['none', null]] as const) {
      const as2 = await startFakeOAuthServer({ clientId: 'c2', clientSecret: secret, authMethod: method });
      // No resource_metadata in the 401: the protected resource metadata is found at its well-known path.
      const mcp2 = await startFakeMcpServer({
        bearer: { accepts: (a) => as2.validAccessTokens.has(a?.replace(/^Bearer /, '') ?? '') },
        documents: (base) => ({ '/.well-known/oauth-protected-resource': { resource: `${base}/mcp`, authorization_servers: [as2.base] } }),
      });
      try {
        const s = await call('POST', '/v1/mcp_servers', { name: 'docs', url: mcp2.mcpUrl, auth_type: 'oauth2', client_id: 'c2', ...(secret ? { client_secret: secret } : {}) });
        const agent = (await postAgent(fetchPoster(server.apiUrl!, key), scriptedAgentFields(llm.baseUrl, { tools: [{ type: 'mcp', mcp_id: s.json.id }] }))).id as string;
        const link = new URL((await run('dora', 'docs_unavailable', {}, agent)).authEvents[0]!.authorization_url as string);
        expect(`${link.origin}${link.pathname}`, method).toBe(`${as2.base}/authorize`);
        expect(link.searchParams.has('scope'), method).toBe(false);
        expect((await consent(link.href)).status, method).toBe(200);
        const exchange = as2.tokenRequests.at(-1)!;
        expect(exchange, JSON.stringify(exchange)).toMatchObject({ ok: true });
        if (secret) expect(exchange.authorization).toMatch(/^Basic /);
        else expect(exchange.authorization).toBeUndefined();
        expect(exchange.params.client_secret).toBeUndefined();
        expect((await run('dora', 'docs_add', { a: 20, b: 1 }, agent)).toolMessages, method).toEqual(['21']);
      } finally {
        await Promise.all([as2.close(), mcp2.close()]);
      }
    }
  });

  it('refuses what it would not act on: OAuth client fields and the sharing rule on tool entries, a secret or scopes without client_id', async () => {
    const refusals: [string, string, unknown, string[]][] = [
      ['POST', '/v1/mcp_servers', { name: 'x', url: mcp.mcpUrl, auth_type: 'oauth2', client_secret: 's' }, ['body', 'client_secret']],
      ['POST', '/v1/mcp_servers', { name: 'x', url: mcp.mcpUrl, auth_type: 'oauth2', additional_scopes: ['a'] }, ['body', 'additional_scopes']],
      ['PATCH', `/v1/mcp_servers/${serverId}`, { client_id: null }, ['body', 'client_secret']],
    ];
    const total = (await call('GET', '/v1/mcp_servers')).json.total;
    for (const [method, path, body, loc] of refusals) {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${JSON.stringify(body)}`).toBe(422);
      expect(r.json.detail[0].loc).toEqual(loc);
    }
    expect((await call('GET', '/v1/mcp_servers')).json.total).toBe(total);
    expect((await call('GET', `/v1/mcp_servers/${serverId}`)).json).toMatchObject({ client_id: CLIENT_ID, client_secret: '********' });

    const entries: [Record<string, unknown>, string][] = [
      [{ url: mcp.mcpUrl, auth_type: 'oauth2', client_id: 'c' }, 'client_id'],
      [{ url: mcp.mcpUrl, auth_type: 'oauth2', client_secret: 's' }, 'client_secret'],
      [{ url: mcp.mcpUrl, auth_type: 'oauth2', additional_scopes: ['x'] }, 'additional_scopes'],
      [{ mcp_id: serverId, share_user_token_across_other_agents: false }, 'share_user_token_across_other_agents'],
    ];
    for (const [entry, field] of entries) {
      const r = await call('POST', '/v1/agents', scriptedAgentFields(llm.baseUrl, { name: `inline-${field}`, tools: [{ type: 'mcp', ...entry }] }));
      expect(r.status, JSON.stringify(r.json)).toBe(422);
      expect(r.json.detail[0].loc).toEqual(['body', 'tools', 0, field]);
      expect(r.json.detail[0].msg).toMatch(/set it on a registered MCP server \(POST \/v1\/mcp_servers/);
    }
  });

  it('never shows or logs the client secret, the code, or the tokens', async () => {
    const shown = (await call('GET', `/v1/mcp_servers/${serverId}`)).text + (await call('GET', '/v1/mcp_servers')).text + (await call('GET', `/v1/mcp_servers/${serverId}/user_tokens`)).text;
    const tasks = (await call('GET', `/v1/agents/${agentId}/tasks?per_page=50`)).json;
    let trace = '';
    for (const t of tasks.items ?? tasks) trace += JSON.stringify((await call('GET', `/v1/tasks/${t.id}/events`)).json) + JSON.stringify((await call('GET', `/v1/tasks/${t.id}`)).json);
    const secrets = [
      CLIENT_SECRET,
      ...as.authorizations.map((a) => a.code),
      ...[...as.validAccessTokens],
      ...as.tokenRequests.flatMap((t) => [t.params.refresh_token, t.params.code_verifier].filter((x): x is string => Boolean(x))),
    ];
    expect(secrets.length).toBeGreaterThan(5);
    const logged = logs.join('');
    expect(logged).toContain('/v1/mcp_servers/oauth/callback');
    for (const s of secrets) {
      expect(shown).not.toContain(s);
      expect(trace).not.toContain(s);
      expect(logged).not.toContain(s);
    }
    expect(trace.length).toBeGreaterThan(1000);
  });
});
