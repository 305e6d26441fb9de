import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMcpServer, type FakeMcpServer } from '../fakes/mcp-server.js';
import { TEST_DBS } from '../support/harness.js';
import { api, createAgent, hook, startWebhookWorld, type WebhookWorld } from '../webhooks/webhook-helpers.js';

type Ev = { type: string; data: Record<string, unknown> };

/**
 * OAuth tokens stored per user (PUT /v1/mcp_servers/{id}/user_tokens/{user_id}) used by runs of that user's tasks,
 * against a scripted MCP server that accepts only alice's token.
 */
describe.each(TEST_DBS)('MCP OAuth with tokens stored per user (%s)', (kind) => {
  let w: WebhookWorld;
  let oauth: FakeMcpServer;
  let serverId: string;
  let agentId: string;
  beforeAll(async () => {
    [w, oauth] = await Promise.all([startWebhookWorld(kind), startFakeMcpServer({ auth: { header: 'authorization', value: 'Bearer alice-token' } })]);
    const s = await api(w, 'POST', '/v1/mcp_servers', { name: 'crm', url: oauth.mcpUrl, auth_type: 'oauth2' });
    expect(s.status, JSON.stringify(s.json)).toBe(201);
    serverId = s.json.id;
    agentId = await createAgent(w, { tools: [{ type: 'mcp', mcp_id: serverId }] });
  });
  afterAll(async () => {
    await Promise.all([w?.close(), oauth?.close()]);
  });

  const store = async (user: string, token: string) => {
    const r = await api(w, 'PUT', `/v1/mcp_servers/${serverId}/user_tokens/${user}`, { access_token: token });
    expect([200, 201], JSON.stringify(r.json)).toContain(r.status);
  };
  const asUser = (user: string, extra = '') => hook(w, `/?agent_id=${agentId}&user_id=${user}${extra}`, { json: { prompt: 'Add 1 and 2' }, headers: { 'x-api-key': w.keyA } });
  const lastToolMessages = () => w.llm.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content as string);
  const events = async (taskId: string) => (await api(w, 'GET', `/v1/tasks/${taskId}/events`)).json as Ev[];
  const authEvents = async (taskId: string) => (await events(taskId)).filter((e) => e.type === 'auth_event').map((e) => e.data);

  it("a task of user U calls the tool with U's stored token (webhook user_id and invoke input.user.id)", async () => {
    await store('alice', 'alice-token');
    w.llm.reply({ toolCalls: [{ name: 'crm_add', arguments: { a: 1, b: 2 } }] }, { text: 'It is 3.' });
    const ok = await asUser('alice');
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    expect(ok.json).toMatchObject({ status: 'completed', result: 'It is 3.' });
    expect(lastToolMessages()).toEqual(['3']);
    expect(oauth.calls.at(-1)).toMatchObject({ tool: 'add', authorization: 'Bearer alice-token' });

    w.llm.reply({ toolCalls: [{ name: 'crm_echo', arguments: { text: 'via invoke' } }] }, { text: 'Echoed.' });
    const invoked = await api(w, 'POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'Echo it', user: { id: 'alice' } } });
    expect(invoked.json).toMatchObject({ status: 'completed', result: 'Echoed.' });
    expect(oauth.calls.at(-1)).toMatchObject({ tool: 'echo', authorization: 'Bearer alice-token' });

    // The stored token appears in neither the task nor its trace.
    for (const id of [ok.json.id, invoked.json.id]) {
      const seen = JSON.stringify((await api(w, 'GET', `/v1/tasks/${id}`)).json) + JSON.stringify(await events(id));
      expect(seen).not.toContain('alice-token');
    }
  });

  it("a task of another user (or of no user) does not get U's token: the clear auth failure and an auth_event", async () => {
    await store('alice', 'alice-token');
    for (const extra of ['bob', '']) {
      const before = oauth.calls.length;
      w.llm.reply({ toolCalls: [{ name: 'crm_unavailable', arguments: {} }] }, { text: 'Please authorize the CRM.' });
      const r = extra ? await asUser(extra) : await hook(w, `/?agent_id=${agentId}`, { json: { prompt: 'Add 1 and 2' }, headers: { 'x-api-key': w.keyA } });
      expect(r.json).toMatchObject({ status: 'completed', result: 'Please authorize the CRM.' });
      expect(w.llm.requests.at(-2)!.tools).not.toContain('crm_add');
      const [msg] = lastToolMessages();
      expect(msg).toContain(`pass an access token in user_tokens under the key '${serverId}'`);
      expect(msg).toContain(`/v1/mcp_servers/${serverId}/user_tokens/{user_id}`);
      expect(oauth.calls.length).toBe(before);
      const auth = await authEvents(r.json.id);
      expect(auth[0]).toMatchObject({ kind: 'mcp_oauth', status: 'authorization_required', graph_item_id: serverId });
      expect(auth[0].user_id).toBe(extra || undefined);
    }
  });

  it('an expired stored token is not used', async () => {
    // carol's token is the one the server accepts: only its expiry can keep it from being used.
    const put = await api(w, 'PUT', `/v1/mcp_servers/${serverId}/user_tokens/carol`, { access_token: 'alice-token', expires_in: 3600 });
    expect(put.status).toBe(201);
    await w.server.container.db.kysely
      .updateTable('mcp_user_tokens')
      .set({ expires_at: Date.now() - 60_000 })
      .where('mcp_server_id', '=', serverId)
      .where('user_id', '=', 'carol')
      .execute();
    const listed = (await api(w, 'GET', `/v1/mcp_servers/${serverId}/user_tokens`)).json.items.find((i: { user_id: string }) => i.user_id === 'carol');
    expect(Date.parse(listed.expires_at)).toBeLessThan(Date.now());

    const before = oauth.calls.length;
    w.llm.reply({ toolCalls: [{ name: 'crm_unavailable', arguments: {} }] }, { text: 'Your authorization expired.' });
    const r = await asUser('carol');
    expect(r.json).toMatchObject({ status: 'completed', result: 'Your authorization expired.' });
    expect(lastToolMessages()[0]).toMatch(/the token stored for user 'carol' expired at .*pass an access token in user_tokens/);
    expect(oauth.calls.length).toBe(before);
    expect((await authEvents(r.json.id))[0]).toMatchObject({ status: 'authorization_required', user_id: 'carol', stored_token: 'expired' });
  });

  it('user_tokens given in the webhook wins over the stored token', async () => {
    await store('dan', 'dan-stale-token');

    // Alone, dan's stored token is used, and the server refuses it.
    w.llm.reply({ toolCalls: [{ name: 'crm_unavailable', arguments: {} }] }, { text: 'The CRM refused.' });
    const refused = await asUser('dan');
    expect(refused.json).toMatchObject({ status: 'completed', result: 'The CRM refused.' });
    expect(lastToolMessages()[0]).toMatch(/refused the credentials/);
    expect((await authEvents(refused.json.id))[0]).toMatchObject({ status: 'token_rejected', token_source: 'stored', user_id: 'dan' });

    // With user_tokens for the graph item, that token is the one sent.
    const tokens = encodeURIComponent(JSON.stringify({ [serverId]: 'alice-token' }));
    w.llm.reply({ toolCalls: [{ name: 'crm_add', arguments: { a: 1, b: 2 } }] }, { text: 'It is 3.' });
    const ok = await asUser('dan', `&user_tokens=${tokens}`);
    expect(ok.json).toMatchObject({ status: 'completed', result: 'It is 3.' });
    expect(lastToolMessages()).toEqual(['3']);
    expect(oauth.calls.at(-1)).toMatchObject({ tool: 'add', authorization: 'Bearer alice-token' });
    expect(await authEvents(ok.json.id)).toEqual([]);
  });

  it('user_tokens given to POST /v1/agents/{id}/invoke are the token sent (it was accepted and ignored), and never shown', async () => {
    w.llm.reply({ toolCalls: [{ name: 'crm_add', arguments: { a: 2, b: 5 } }] }, { text: 'It is 7.' });
    const r = await api(w, 'POST', `/v1/agents/${agentId}/invoke`, { input: { text: 'Add 2 and 5' }, user_tokens: { [serverId]: 'alice-token' } });
    expect(r.json).toMatchObject({ status: 'completed', result: 'It is 7.' });
    expect(lastToolMessages()).toEqual(['7']);
    expect(oauth.calls.at(-1)).toMatchObject({ tool: 'add', authorization: 'Bearer alice-token' });
    expect(await authEvents(r.json.id)).toEqual([]);
    const seen = JSON.stringify((await api(w, 'GET', `/v1/tasks/${r.json.id}`)).json) + JSON.stringify(await events(r.json.id));
    expect(seen).not.toContain('alice-token');

    const bad = await api(w, 'POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'x' }, user_tokens: { [serverId]: 42 } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['body', 'user_tokens', serverId]);
  });
});
