import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS } from '../support/harness.js';
import { api, createAgent, enableWebhook, hook, startWebhookWorld, waitTask, type WebhookWorld } from '../webhooks/webhook-helpers.js';
import { startJwksServer, type JwksServer } from './jwks-server.js';
import { startFakeMcpServer } from '../fakes/mcp-server.js';

/**
 * OIDC pre-auth (docs/access.md): an agent with `use_oidc_pre_auth` runs only for a caller that presents an end-user
 * token signed by the configured issuer (a real JWKS server here) for one of its `pre_auth_audiences`, on every
 * invocation path: REST invoke, the public webhook URL (JSON through the fast lane, and a form through Fastify) and
 * the key form. The claims are the task's user; with `use_oidc_pre_auth_token_for_llm` the token is the LLM's
 * credential, which the scripted LLM shows.
 */
describe.each(TEST_DBS)('OIDC pre-auth (%s)', (kind) => {
  let idp: JwksServer;
  let w: WebhookWorld;
  let agent: string;
  let publicUrl: string;
  beforeAll(async () => {
    idp = await startJwksServer();
    w = await startWebhookWorld(kind, { AGENTRY_OIDC_PRE_AUTH_ISSUER: idp.issuer, AGENTRY_OIDC_PRE_AUTH_JWKS_URL: idp.jwksUrl });
    w.llm.handle((req) => ({ text: `hello ${req.lastUserText}` }));
    agent = await createAgent(w, { use_oidc_pre_auth: true, pre_auth_audiences: ['app', 'other-app'], use_oidc_pre_auth_token_for_llm: true });
    publicUrl = await enableWebhook(w, agent);
  });
  afterAll(async () => {
    await w?.close();
    await idp?.close();
  });

  const invoke = (headers: Record<string, string>) =>
    fetch(`${w.api}/v1/agents/${agent}/invoke`, {
      method: 'POST',
      headers: { 'x-api-key': w.keyA, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ input: { text: 'hi', user: { id: 'claimed-by-caller', email: 'caller@example.com' } } }),
    });

  it('refuses a REST invocation without a user token (401) or with a wrong one (403), creating no task', async () => {
    const before = (await api(w, 'GET', `/v1/agents/${agent}/tasks`)).json.total;
    const none = await invoke({});
    expect([none.status, await none.json()]).toEqual([401, { detail: 'User token not specified' }]);
    const cases = [
      await idp.signWithOtherKey({ sub: 'u1', aud: 'app' }),
      await idp.sign({ sub: 'u1', aud: 'someone-else' }),
      await idp.sign({ sub: 'u1', aud: 'app' }, { issuer: 'https://evil.example.test' }),
      await idp.sign({ sub: 'u1', aud: 'app' }, { expiresIn: Math.floor(Date.now() / 1000) - 3600 }),
      'not-a-jwt',
    ];
    for (const token of cases) {
      const r = await invoke({ 'x-user-token': token });
      expect(r.status, token).toBe(403);
      expect((await r.json()).detail).toMatch(/^Invalid user token/);
    }
    expect((await api(w, 'GET', `/v1/agents/${agent}/tasks`)).json.total).toBe(before);
  });

  it('runs for a verified end user: the claims are the user, the token is the LLM credential', async () => {
    const token = await idp.sign({ sub: 'user-42', aud: 'other-app', email: 'ada@example.com', given_name: 'Ada' });
    w.llm.requests.length = 0;
    // Authorization is free when the key travels in x-api-key.
    const r = await invoke({ authorization: `Bearer ${token}` });
    expect(r.status).toBe(200);
    const task = await r.json();
    expect(task).toMatchObject({ status: 'completed', user_id: 'user-42', input: { user: { id: 'user-42', email: 'ada@example.com', first_name: 'Ada' } } });
    expect(w.llm.requests.map((q) => q.headers.authorization)).toEqual([`Bearer ${token}`]);
  });

  it('guards the public webhook URL on both transports and the key form', async () => {
    const token = await idp.sign({ sub: 'hook-user', aud: 'app' });
    // JSON: the fast lane.
    expect((await hook(w, publicUrl, { json: { prompt: 'x', asynchronous: false } })).status).toBe(401);
    expect((await hook(w, publicUrl, { json: { prompt: 'x' }, headers: { authorization: `Bearer ${await idp.signWithOtherKey({ sub: 'x', aud: 'app' })}` } })).status).toBe(403);
    const ok = await hook(w, publicUrl + '?asynchronous=false', { json: { prompt: 'fast lane' }, headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect((await waitTask(w, ok.json.id)).user_id).toBe('hook-user');
    // A form body: the Fastify route.
    expect((await hook(w, publicUrl, { form: { prompt: 'x' } })).status).toBe(401);
    const form = await hook(w, publicUrl + '?asynchronous=false', { form: { prompt: 'form' }, headers: { 'x-user-token': token } });
    expect([form.status, form.json.status]).toEqual([200, 'completed']);
    // Key form.
    const keyUrl = `/?agent_id=${agent}&asynchronous=false`;
    expect((await hook(w, keyUrl, { json: { prompt: 'x' }, headers: { 'x-api-key': w.keyA } })).status).toBe(401);
    const keyed = await hook(w, keyUrl, { json: { prompt: 'key form' }, headers: { 'x-api-key': w.keyA, 'x-user-token': `Bearer ${token}` } });
    expect([keyed.status, keyed.json.status]).toEqual([200, 'completed']);
  });

  it('ignores a pre-auth slot smuggled into user_tokens', async () => {
    const r = await hook(w, publicUrl + '?asynchronous=false', { json: { prompt: 'x', user_tokens: JSON.stringify({ $oidc_pre_auth: 'forged' }) } });
    expect(r.status).toBe(401);
  });

  it('refuses at create what an invocation could not honour (422)', async () => {
    const noAudience = await api(w, 'POST', '/v1/agents', { name: 'no-audience', use_oidc_pre_auth: true });
    expect(noAudience.status).toBe(422);
    expect(noAudience.json.detail[0].loc).toEqual(['body', 'pre_auth_audiences']);
    const stray = await api(w, 'POST', '/v1/agents', { name: 'stray', oidc_pre_auth_token_mcp_audience: 'mcp' });
    expect(stray.json.detail[0].loc).toEqual(['body', 'oidc_pre_auth_token_mcp_audience']);
    const t = await createTestApp(kind);
    try {
      const r = await t.req('POST', '/v1/agents', { name: 'no-issuer', use_oidc_pre_auth: true, pre_auth_audiences: ['app'] });
      expect(r.statusCode).toBe(422);
      expect(r.json().detail[0]).toMatchObject({ loc: ['body', 'use_oidc_pre_auth'], msg: expect.stringContaining('AGENTRY_OIDC_PRE_AUTH_ISSUER') });
    } finally {
      await t.close();
    }
  });

  it('needs nothing from agents without pre-auth', async () => {
    const plain = await createAgent(w);
    const r = await api(w, 'POST', `/v1/agents/${plain}/invoke`, { input: { text: 'hi' } });
    expect([r.status, r.json.status]).toEqual([200, 'completed']);
  });

  it("hands the token to the agent's oauth2 MCP servers with oidc_pre_auth_token_mcp_audience, only if issued for it", async () => {
    const token = await idp.sign({ sub: 'mcp-user', aud: ['app', 'mcp-api'] });
    const mcp = await startFakeMcpServer({ auth: { header: 'authorization', value: `Bearer ${token}` } });
    try {
      const server = await api(w, 'POST', '/v1/mcp_servers', { name: 'crm', url: mcp.mcpUrl, auth_type: 'oauth2' });
      expect(server.status).toBe(201);
      const id = await createAgent(w, { use_oidc_pre_auth: true, pre_auth_audiences: ['app'], oidc_pre_auth_token_mcp_audience: 'mcp-api', tools: [{ type: 'mcp', mcp_id: server.json.id }] });
      w.llm.reply({ toolCalls: [{ name: 'crm_add', arguments: { a: 2, b: 3 } }] }, { text: 'It is 5.' });
      const r = await fetch(`${w.api}/v1/agents/${id}/invoke`, {
        method: 'POST',
        headers: { 'x-api-key': w.keyA, 'x-user-token': token, 'content-type': 'application/json' },
        body: JSON.stringify({ input: { text: 'add' } }),
      });
      expect(await r.json()).toMatchObject({ status: 'completed', result: 'It is 5.', user_id: 'mcp-user' });
      expect(mcp.calls.at(-1)).toMatchObject({ tool: 'add', authorization: `Bearer ${token}` });
      // A token of the app alone is not sent to the MCP server: refused before anything runs.
      const appOnly = await idp.sign({ sub: 'mcp-user', aud: 'app' });
      const refused = await fetch(`${w.api}/v1/agents/${id}/invoke`, {
        method: 'POST',
        headers: { 'x-api-key': w.keyA, 'x-user-token': appOnly, 'content-type': 'application/json' },
        body: JSON.stringify({ input: { text: 'add' } }),
      });
      expect([refused.status, (await refused.json()).detail]).toEqual([403, 'Invalid user token: not issued for the audience mcp-api']);
    } finally {
      await mcp.close();
    }
  });
});
