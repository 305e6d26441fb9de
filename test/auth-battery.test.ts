import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentedRoute, Router } from '../src/http/router.js';
import { createTestApp, TEST_DBS, type TestApp } from './support/harness.js';
import { ROLES, roleAllows, roleRefusal, type KeyRole } from '../src/auth/roles.js';

/**
 * The authorization battery (docs/architecture.md rule 9, docs/contract.md#authentication): EVERY route registered with
 * `auth` is called with no credentials (401), a wrong key (403), a wrong bearer token (403), and, when it has path
 * parameters, with organization B's key on organization A's resources (404, and nothing changes).
 *
 * Path parameters come from PARAMS. A route with a parameter missing there FAILS this test: add a row for it.
 * Rows are keyed by the parameter name, or by the route path up to the parameter when one name serves several
 * resources (`/v1/custom_functions/:id`). A factory creates the resource in organization A (through the API, with
 * A's key) and returns the path value; it sees the values of the parameters left of it. Routes whose body or query
 * must not be empty get a valid one from SAMPLES (keyed by `METHOD url`), so B's call reaches the lookup.
 */

/** `key`: the key the factories create with (default: organization A's admin key). */
type Ctx = { t: TestApp; params: Record<string, string>; key?: string };
const asKey = (ctx: Ctx) => (ctx.key ? { 'x-api-key': ctx.key } : undefined);
interface ParamRow {
  make(ctx: Ctx): Promise<string>;
  /** false: not an organization's resource (a provider name); B's key may use it. */
  scoped?: boolean;
}

async function created(ctx: Ctx, url: string, body: unknown): Promise<Record<string, any>> {
  const r = await ctx.t.req('POST', url, body, asKey(ctx));
  if (r.statusCode !== 201 && r.statusCode !== 200 && r.statusCode !== 202) throw new Error(`factory POST ${url} -> ${r.statusCode} ${r.body}`);
  return r.json();
}

const PETS = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: { '/pets': { get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } } } },
};

let counter = 0;
const unique = () => `${Date.now().toString(36)}${++counter}`;
const agentFor = async (ctx: Ctx) => (await created(ctx, '/v1/agents', { name: `battery-${unique()}` })).id as string;

const PARAMS: Record<string, ParamRow> = {
  // agents (issue 2)
  agent_id: { make: agentFor },
  version: { make: async () => '2' },
  tool_id: {
    make: async (ctx) => {
      const sub = await agentFor(ctx);
      const r = await ctx.t.req('POST', `/v1/agents/${ctx.params.agent_id}/tools`, { type: 'agent', agent_id: sub }, asKey(ctx));
      if (r.statusCode !== 201) throw new Error(`attach: ${r.statusCode} ${r.body}`);
      return sub;
    },
  },
  secret_name: {
    make: async (ctx) => {
      const name = `BATTERY_${unique()}`;
      const r = await ctx.t.req('PUT', `/v1/secrets/${name}`, { value: 'a-value' });
      if (r.statusCode >= 300) throw new Error(`secret: ${r.statusCode}`);
      return name;
    },
  },
  provider: { make: async () => 'openai', scoped: false },
  // Rows for other domains' parameters: their owners keep them in step with their create bodies.
  '/v1/custom_functions/:id': {
    make: async (ctx) => (await created(ctx, '/v1/custom_functions', { name: `battery_fn_${unique()}`, code: 'async function run(args) { return args; }' })).id,
  },
  '/v1/mcp_servers/:id': { make: async (ctx) => (await created(ctx, '/v1/mcp_servers', { name: `battery-mcp-${unique()}`, url: 'https://mcp.example.com/mcp' })).id },
  // A user's stored OAuth token: the server becomes oauth2 first (tokens are stored only for oauth2 servers).
  '/v1/mcp_servers/:id/user_tokens/:user_id': {
    make: async (ctx) => {
      const server = `/v1/mcp_servers/${ctx.params.id}`;
      const patched = await ctx.t.req('PATCH', server, { auth_type: 'oauth2' });
      if (patched.statusCode !== 200) throw new Error(`oauth2: ${patched.statusCode} ${patched.body}`);
      const user = `battery-user-${unique()}`;
      const r = await ctx.t.req('PUT', `${server}/user_tokens/${user}`, { access_token: 'battery-token' });
      if (r.statusCode !== 201) throw new Error(`user token: ${r.statusCode} ${r.body}`);
      return user;
    },
  },
  '/v1/skills/:name': {
    make: async (ctx) => (await created(ctx, '/v1/skills', { name: `battery-skill-${unique()}`, description: 'd', instructions: 'i' })).name,
  },
  kb_id: { make: async (ctx) => (await created(ctx, '/v1/knowledge', { name: `battery-kb-${unique()}` })).id },
  document_id: {
    make: async (ctx) => {
      const r = await created(ctx, `/v1/knowledge/${ctx.params.kb_id}/documents`, { document_urls: ['https://example.com/doc.txt'] });
      const docs = (r.items ?? r.documents ?? r) as { id: string }[];
      return Array.isArray(docs) ? docs[0].id : (r.id as string);
    },
  },
  task_id: {
    make: async (ctx) => (await created(ctx, `/v1/agents/${await agentFor(ctx)}/invoke/async`, { input: { text: 'hello' } })).id,
  },
  connector_id: { make: async (ctx) => (await created(ctx, '/v1/connectors', { name: `battery-connector-${unique()}`, openapi: PETS })).id },
  connection_id: {
    make: async (ctx) => (await created(ctx, `/v1/connectors/${ctx.params.connector_id}/connect`, { name: 'battery', base_url: 'https://api.example.com' })).id,
  },
  operation_id: { make: async () => 'listPets' },
  // xpander's internal API (issue 25): a standalone tool is `{connector_id}_{operation_id}`; a user id names no
  // resource of an organization; `/{organization_id}/...` routes take the caller's organization.
  tool_ref: {
    make: async (ctx) => {
      const connector = (await created(ctx, '/v1/connectors', { name: `battery-tool-${unique()}`, openapi: PETS })).id as string;
      const ops = (await ctx.t.req('GET', `/v1/tools/connectors/${connector}/operations`)).json() as { id: string }[];
      return `${connector}_${ops[0].id}`;
    },
  },
  user_id: { make: async () => `battery-user-${unique()}`, scoped: false },
  organization_id: { make: async (ctx) => ctx.t.orgA },
  // The activity log names a task of that agent.
  '/activity/:agent_id/:task_id': {
    make: async (ctx) => (await created(ctx, `/v1/agents/${ctx.params.agent_id}/invoke/async`, { input: { text: 'hello' } })).id,
  },
  // schedules (issue 23)
  schedule_id: {
    make: async (ctx) => (await created(ctx, `/v1/agents/${ctx.params.agent_id}/schedules`, { interval_seconds: 3600, invocation: { input: { text: 'battery' } } })).id,
  },
  // memories (issue 26): a user id is not an organization's resource (B lists its own, empty, memories of that id);
  // a memory is, under its agent and under its user.
  '/v1/users/:user_id': { make: async () => `battery-user-${unique()}`, scoped: false },
  memory_id: {
    make: async (ctx) =>
      ctx.params.agent_id
        ? (await created(ctx, `/v1/agents/${ctx.params.agent_id}/memories`, { content: 'Likes tea.', user_id: 'battery-user' })).id
        : (await created(ctx, `/v1/users/${ctx.params.user_id}/memories`, { agent_id: await agentFor(ctx), content: 'Likes tea.' })).id,
  },
  // notifications (issue 21): a delivered notification of A's task (this app runs no worker, so it is written here).
  delivery_id: {
    make: async (ctx) => {
      const id = `battery-delivery-${unique()}`;
      const now = Date.now();
      await ctx.t.c.db.kysely
        .insertInto('notification_deliveries')
        .values({ organization_id: ctx.t.orgA, id, task_id: ctx.params.task_id, agent_id: 'a', event: 'task.completed', channel: 'webhook', target: '{"url":"https://example.com"}', payload: '{}', status: 'delivered', attempts: 1, next_attempt_at: now, give_up_at: now, created_at: now, updated_at: now })
        .execute();
      return id;
    },
  },
  // workflows (issue 27)
  // A workflow's first version is 1 (an agent's is 2).
  '/v1/workflows/:workflow_id/versions/:version': { make: async () => '1' },
  workflow_id: { make: async (ctx) => (await created(ctx, '/v1/workflows', { name: `battery-wf-${unique()}`, steps: [{ id: 'ok', type: 'approval' }] })).id },
  // access (issue 24)
  key_id: { make: async (ctx) => (await created(ctx, '/v1/api_keys', { name: `battery-key-${unique()}`, role: 'read-only' })).id },
};

interface Sample {
  body?: unknown;
  query?: Record<string, string>;
  /**
   * For create-or-replace routes, where B's call legitimately creates B's own resource under the same name:
   * instead of a 404, check that A's resource is untouched.
   */
  upsert?: (ctx: Ctx) => Promise<void>;
}

const SAMPLES: Record<string, Sample> = {
  'POST /v1/agents/:agent_id/tools': { body: { type: 'workflow', workflow_id: 'w' } },
  'PUT /v1/secrets/:secret_name': {
    body: { value: 'from-b' },
    upsert: async ({ t, params }) => {
      expect(await t.c.secrets.reveal(t.orgA, params.secret_name)).toBe('a-value');
      expect(await t.c.secrets.reveal(t.orgB, params.secret_name)).toBe('from-b');
    },
  },
  'POST /v1/agents/:agent_id/invoke': { body: { input: { text: 'hi' } } },
  'POST /v1/agents/:agent_id/invoke/async': { body: { input: { text: 'hi' } } },
  'POST /v1/agents/:agent_id/invoke/stream': { body: { input: { text: 'hi' } } },
  'POST /v1/knowledge/:kb_id/documents': { body: { document_urls: ['https://example.com/doc.txt'] } },
  'GET /v1/knowledge/:kb_id/search': { query: { search_query: 'x' } },
  'POST /v1/connectors/:connector_id/connect': { body: { name: 'from-b', base_url: 'https://api.example.com' } },
  'PUT /v1/mcp_servers/:id/user_tokens/:user_id': { body: { access_token: 'from-b' } },
  // xpander's internal API (issue 25)
  'POST /agent-execution/:agent_id': { body: { input: { text: 'hi' } } },
  'POST /knowledge_bases/:kb_id': { body: [{ document_url: 'https://example.com/doc.txt', sync: false }] },
  'DELETE /knowledge_bases/:kb_id': { body: ['0190f1f0-0000-7000-8000-000000000001'] },
  'GET /knowledge_bases/:kb_id': { query: { search_query: 'x' } },
  'POST /v1/agents/:agent_id/schedules': { body: { interval_seconds: 3600, invocation: { input: { text: 'from-b' } } } },
  'POST /v1/agents/:agent_id/memories': { body: { content: 'from-b' } },
  'PATCH /v1/agents/:agent_id/memories/:memory_id': { body: { content: 'from-b' } },
  'PATCH /v1/users/:user_id/memories/:memory_id': { body: { content: 'from-b' } },
};

const paramsOf = (url: string) => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
const rowKey = (url: string, p: string) => {
  const prefix = url.slice(0, url.indexOf(`:${p}`) + p.length + 1);
  return prefix in PARAMS ? prefix : p in PARAMS ? p : undefined;
};

function sampleFor(route: DocumentedRoute): Sample | undefined {
  const s = SAMPLES[`${route.method} ${route.url}`] ?? {};
  const bodyOk = !route.body || s.body !== undefined || route.body.safeParse({}).success;
  const queryOk = !route.query || s.query !== undefined || route.query.safeParse({}).success;
  if (!bodyOk || !queryOk) return undefined;
  return { ...s, body: s.body ?? (route.body ? {} : undefined) };
}

/**
 * Makes organization A's resources for the route's path parameters with their PARAMS factories (fresh ones per
 * route) and answers the route's URL with them and the sample's query, or why a factory failed.
 */
async function concreteUrl(ctx: Ctx, r: DocumentedRoute, keys: string[], sample: Sample): Promise<{ url: string } | { failure: string }> {
  try {
    for (const [i, p] of paramsOf(r.url).entries()) ctx.params[p] = await PARAMS[keys[i]!]!.make(ctx);
  } catch (e) {
    return { failure: `${r.method} ${r.url}: factory failed: ${(e as Error).message}` };
  }
  const url = r.url.replace(/:([A-Za-z0-9_]+)/g, (_m, p: string) => encodeURIComponent(ctx.params[p]!));
  return { url: url + (sample.query ? '?' + new URLSearchParams(sample.query) : '') };
}

describe.each(TEST_DBS)('authorization battery (%s)', (kind) => {
  let t: TestApp;
  let routes: DocumentedRoute[];
  beforeAll(async () => {
    t = await createTestApp(kind);
    routes = (t.app as unknown as { agentryRouter: Router }).agentryRouter.routes.filter((r) => r.auth);
  });
  afterAll(async () => t?.close());

  it('covers every /v1 route', () => {
    expect(routes.length).toBeGreaterThan(15);
    const unprotected = (t.app as unknown as { agentryRouter: Router }).agentryRouter.routes.filter((r) => !r.auth && r.url.startsWith('/v1/'));
    // Public by design: presigned file URLs carry their own signature (docs/contract.md#webhook-files); the MCP OAuth
    // callback is called by the user's browser and trusts only its sealed state (docs/decisions.md, MCP servers: interactive OAuth).
    const publicByDesign = (url: string) => url.startsWith('/v1/files/') || url === '/v1/mcp_servers/oauth/callback';
    expect(unprotected.map((r) => `${r.method} ${r.url}`)).toEqual(unprotected.filter((r) => publicByDesign(r.url)).map((r) => `${r.method} ${r.url}`));
    expect(unprotected.map((r) => `${r.method} ${r.url}`)).toContain('GET /v1/mcp_servers/oauth/callback');
  });

  it('answers 401 without credentials and 403 with wrong ones, on every route', async () => {
    const failures: string[] = [];
    for (const r of routes) {
      const url = r.url.replace(/:([A-Za-z0-9_]+)/g, '0190f1f0-0000-7000-8000-000000000001');
      const payload = r.body ? '{}' : undefined;
      const headers = payload ? { 'content-type': 'application/json' } : {};
      const none = await t.app.inject({ method: r.method, url, payload, headers });
      const wrong = await t.app.inject({ method: r.method, url, payload, headers: { ...headers, 'x-api-key': 'agk_' + 'x'.repeat(43) } });
      const bearer = await t.app.inject({ method: r.method, url, payload, headers: { ...headers, authorization: 'Bearer not.a.jwt' } });
      if (none.statusCode !== 401 || none.body !== '{"detail":"API key not specified"}') failures.push(`${r.method} ${r.url} no key -> ${none.statusCode} ${none.body}`);
      if (wrong.statusCode !== 403 || wrong.body !== '{"detail":"Invalid API key"}') failures.push(`${r.method} ${r.url} wrong key -> ${wrong.statusCode} ${wrong.body}`);
      if (bearer.statusCode !== 403 || bearer.body !== '{"detail":"Invalid API key"}') failures.push(`${r.method} ${r.url} wrong bearer -> ${bearer.statusCode} ${bearer.body}`);
    }
    expect(failures).toEqual([]);
  });

  it("answers 404 to organization B on organization A's resources, on every route with path parameters", async () => {
    const missing = new Set<string>();
    const failures: string[] = [];
    const checked: { route: DocumentedRoute; url: string }[] = [];
    for (const r of routes) {
      const names = paramsOf(r.url);
      if (!names.length) continue;
      const keys = names.map((p) => rowKey(r.url, p));
      names.forEach((p, i) => keys[i] === undefined && missing.add(`${p} (in ${r.method} ${r.url})`));
      if (keys.some((k) => k === undefined)) continue;
      if (keys.every((k) => PARAMS[k!].scoped === false)) continue;
      const sample = sampleFor(r);
      if (!sample) {
        failures.push(`${r.method} ${r.url}: its body or query cannot be empty; add a valid one to SAMPLES`);
        continue;
      }
      // Fresh resources per route: a B call that wrongly succeeded (a delete) cannot hide behind another route.
      const ctx: Ctx = { t, params: {} };
      const made = await concreteUrl(ctx, r, keys as string[], sample);
      if ('failure' in made) {
        failures.push(made.failure);
        continue;
      }
      const url = made.url;
      const res = await t.req(r.method, url, sample.body, { 'x-api-key': t.keyB });
      if (sample.upsert) {
        if (res.statusCode >= 300) failures.push(`${r.method} ${r.url} as B (create-or-replace) -> ${res.statusCode} ${res.body}`);
        else await sample.upsert(ctx);
      } else if (res.statusCode !== 404 || !/^\{"detail":"[A-Za-z ]+ not found"\}$/.test(res.body)) failures.push(`${r.method} ${r.url} as B -> ${res.statusCode} ${res.body}`);
      checked.push({ route: r, url });
    }
    expect([...missing], 'path parameters without a row in PARAMS').toEqual([]);
    expect(failures).toEqual([]);
    // The resources exist for A (the 404s were not vacuous) and B's calls changed nothing.
    for (const { route, url } of checked.filter((c) => c.route.method === 'GET')) {
      const res = await t.req('GET', url);
      expect(res.statusCode, `${url} as A`).not.toBe(404);
    }
  }, 120_000);

  /**
   * Roles (docs/access.md): the matrix below is the contract; every route must declare exactly it, and a key of each
   * role is refused (403, before anything else) exactly where the matrix says, on every route.
   */
  it('enforces the role matrix on every route', async () => {
    const expected = (r: DocumentedRoute): KeyRole =>
      r.url.startsWith('/v1/api_keys') || (r.url.startsWith('/v1/secrets/') && r.method !== 'GET') ? 'admin' : r.method === 'GET' ? 'read-only' : 'member';
    expect(routes.filter((r) => r.role !== expected(r)).map((r) => `${r.method} ${r.url} declares ${r.role}, the matrix says ${expected(r)}`)).toEqual([]);
    const keys = {} as Record<KeyRole, string>;
    for (const role of ROLES) keys[role] = (await created({ t, params: {} }, '/v1/api_keys', { name: `battery-${role}`, role })).key;
    const failures: string[] = [];
    for (const r of routes) {
      const url = r.url.replace(/:([A-Za-z0-9_]+)/g, '0190f1f0-0000-7000-8000-000000000001');
      for (const role of ROLES) {
        const res = await t.req(r.method, url, r.body ? {} : undefined, { 'x-api-key': keys[role] });
        const refused = res.statusCode === 403 && res.body === JSON.stringify({ detail: roleRefusal(role, r.role) });
        if (refused !== !roleAllows(role, r.role)) failures.push(`${r.method} ${r.url} as ${role} -> ${res.statusCode} ${res.body}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  /**
   * `access_scope: personal` (the default): every route keyed by an agent or a task answers another member's key as
   * if the agent did not exist, and changes nothing; its owner and the organization's admins see it.
   */
  it("answers 404 to another member on a member's personal agent and its tasks, on every such route", async () => {
    const owner = (await created({ t, params: {} }, '/v1/api_keys', { name: 'battery-owner', role: 'member' })).key;
    const other = (await created({ t, params: {} }, '/v1/api_keys', { name: 'battery-other', role: 'member' })).key;
    const failures: string[] = [];
    const checked: string[] = [];
    for (const r of routes) {
      const names = paramsOf(r.url);
      if (!names.includes('agent_id') && !names.includes('task_id')) continue;
      const keys = names.map((p) => rowKey(r.url, p)!);
      const sample = sampleFor(r);
      if (!sample || sample.upsert) continue;
      const ctx: Ctx = { t, params: {}, key: owner };
      const made = await concreteUrl(ctx, r, keys as string[], sample);
      if ('failure' in made) {
        failures.push(made.failure);
        continue;
      }
      const url = made.url;
      const res = await t.req(r.method, url, sample.body, { 'x-api-key': other });
      if (res.statusCode !== 404 || !/^\{"detail":"(Agent|Task) not found"\}$/.test(res.body)) failures.push(`${r.method} ${r.url} as another member -> ${res.statusCode} ${res.body}`);
      if (r.method === 'GET') checked.push(url);
    }
    expect(failures).toEqual([]);
    expect(checked.length).toBeGreaterThan(5);
    // Not vacuous: the owner and an admin see every one of them.
    for (const url of checked) {
      for (const key of [owner, t.keyA]) {
        const res = await t.req('GET', url, undefined, { 'x-api-key': key });
        expect(res.statusCode, `${url}`).not.toBe(404);
      }
    }
  }, 120_000);
});
