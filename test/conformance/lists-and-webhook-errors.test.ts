import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/**
 * Conformance probes: docs/contract.md#lists (list shape) and #errors (422 types) and spec 7.2 (webhook 401, 403 and
 * 503).
 */

const PETS = {
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: { '/pets': { get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } } } },
};

describe.each(TEST_DBS)('conformance: lists and webhook errors (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it("a connector's connections are a paged list {items,total,page,per_page,total_pages}, per_page 1..50", async () => {
    const connector = (await t.req('POST', '/v1/connectors', { name: 'pets', openapi: PETS })).json().id as string;
    for (const name of ['one', 'two', 'three']) {
      expect((await t.req('POST', `/v1/connectors/${connector}/connect`, { name, security: { type: 'bearer', token: `tok-${name}` } })).statusCode).toBe(201);
    }
    const first = await t.req('GET', `/v1/connectors/${connector}/connections?per_page=2`);
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(Object.keys(body).sort()).toEqual(['items', 'page', 'per_page', 'total', 'total_pages']);
    expect(body).toMatchObject({ total: 3, page: 1, per_page: 2, total_pages: 2 });
    expect(body.items.map((c: { name: string }) => c.name)).toEqual(['one', 'two']);
    const second = (await t.req('GET', `/v1/connectors/${connector}/connections?per_page=2&page=2`)).json();
    expect(second.items.map((c: { name: string }) => c.name)).toEqual(['three']);
    expect(second.items[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(JSON.stringify([body, second])).not.toContain('tok-');
    const tooMany = await t.req('GET', `/v1/connectors/${connector}/connections?per_page=51`);
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().detail[0]).toMatchObject({ loc: ['query', 'per_page'], type: 'less_than_equal' });
  });

  it('a query or path integer that is not a number is 422 int_parsing, with loc starting query/path', async () => {
    const agent = (await t.req('POST', '/v1/agents', { name: 'int-parsing-agent' })).json().id as string;
    const page = await t.req('GET', '/v1/agents?page=abc');
    expect(page.statusCode).toBe(422);
    expect(page.json()).toEqual({ detail: [{ loc: ['query', 'page'], msg: 'Input should be a valid integer, unable to parse string as an integer', type: 'int_parsing' }] });
    const version = await t.req('GET', `/v1/agents/${agent}/versions/two`);
    expect(version.statusCode).toBe(422);
    expect(version.json().detail).toEqual([{ loc: ['path', 'version'], msg: 'Input should be a valid integer, unable to parse string as an integer', type: 'int_parsing' }]);
    // A string in a JSON body keeps its documented type (float_type): only text from the URL is parsed.
    const body = await t.req('POST', '/v1/agents', { name: 'int-body', max_self_schedules: 'three' });
    expect(body.json().detail[0]).toMatchObject({ loc: ['body', 'max_self_schedules'], type: 'float_type' });
  });

  it('public URL: a dead URL answers 401 whatever its body; a live one reports malformed JSON as 422 json_invalid', async () => {
    const agent = (await t.req('POST', '/v1/agents', { name: 'malformed-body-agent' })).json().id as string;
    const live = new URL((await t.req('POST', `/v1/agents/${agent}/webhook`)).json().url as string).pathname;
    const send = (url: string) => t.webhooks.inject({ method: 'POST', url, payload: '{"prompt": ', headers: { 'content-type': 'application/json' } });
    const dead = await send(`/wh_${'A'.repeat(43)}`);
    expect(dead.statusCode).toBe(401);
    expect(dead.json()).toEqual({ detail: 'API key not specified' });
    const malformed = await send(live);
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json()).toEqual({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
    // Regenerated: the old URL is dead at once, also for a malformed body.
    await t.req('POST', `/v1/agents/${agent}/webhook/regenerate`);
    expect((await send(live)).statusCode).toBe(401);
  });

  it('key form: with agent_id in the query, a missing or wrong key is 401/403 whatever the body; agent_id missing stays 400', async () => {
    const agent = (await t.req('POST', '/v1/agents', { name: 'key-form-agent' })).json().id as string;
    const send = (url: string, headers: Record<string, string> = {}) =>
      t.webhooks.inject({ method: 'POST', url, payload: '{"prompt": ', headers: { 'content-type': 'application/json', ...headers } });
    expect((await send(`/?agent_id=${agent}`)).json()).toEqual({ detail: 'API key not specified' });
    expect((await send(`/?agent_id=${agent}`)).statusCode).toBe(401);
    const wrong = await send(`/?agent_id=${agent}`, { 'x-api-key': 'agk_wrong' });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json()).toEqual({ detail: 'Invalid API key' });
    const wrongInQuery = await send(`/?agent_id=${agent}&x-api-key=agk_wrong`);
    expect(wrongInQuery.statusCode).toBe(403);
    // A valid key: the malformed body is the caller's error.
    const malformed = await send(`/?agent_id=${agent}`, { 'x-api-key': t.keyA });
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    // agent_id may be in the body, so without it in the query the body is read first: 400 comes before 401.
    const noAgent = await t.webhooks.inject({ method: 'POST', url: '/', payload: { prompt: 'x' } });
    expect(noAgent.statusCode).toBe(400);
    expect(noAgent.json()).toEqual({ detail: 'agent_id is required' });
  });

  it('public URL: a failing lookup of the bound agent is 503 with Retry-After, not a 500', async () => {
    const agent = (await t.req('POST', '/v1/agents', { name: 'bound-agent' })).json().id as string;
    const url = new URL((await t.req('POST', `/v1/agents/${agent}/webhook`)).json().url as string);
    // The secret resolves (its table is intact); the agent behind it cannot be read.
    await sql`alter table agents rename to agents_away`.execute(t.c.db.kysely);
    try {
      const r = await t.webhooks.inject({ method: 'POST', url: url.pathname, payload: { prompt: 'x' } });
      expect(r.statusCode).toBe(503);
      expect(r.json()).toEqual({ detail: 'Public webhook lookup temporarily unavailable' });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await sql`alter table agents_away rename to agents`.execute(t.c.db.kysely);
    }
    const back = await t.webhooks.inject({ method: 'POST', url: url.pathname, payload: { prompt: 'x' } });
    expect(back.json()).toEqual({ status: 'Started' });
  });
});
