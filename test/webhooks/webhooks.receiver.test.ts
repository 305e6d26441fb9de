import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { api, createAgent, enableWebhook, hook, listTasks, llmSaw, startWebhookWorld, waitTask, type WebhookWorld } from './webhook-helpers.js';

const SYNC_RESULT_KEYS = ['agent_id', 'created_at', 'execution_attempts', 'finished_at', 'id', 'result', 'source', 'status'];

describe.each(TEST_DBS)('webhook receiver (%s)', (kind) => {
  let w: WebhookWorld;
  let agentId: string;
  let publicUrl: string;

  beforeAll(async () => {
    w = await startWebhookWorld(kind);
    // The model echoes the first line of the user message; "json:" messages answer the JSON after the prefix.
    w.llm.handle((req) => {
      const first = req.lastUserText.split('\n')[0]!;
      return { text: first.startsWith('json:') ? first.slice(5) : `echo: ${first}` };
    });
    agentId = await createAgent(w);
    publicUrl = await enableWebhook(w, agentId);
  });
  afterAll(async () => w?.close());

  it('public URL: asynchronous by default, answers Started once the task exists, and the task completes', async () => {
    const r = await hook(w, publicUrl, { json: { prompt: 'hello async', task_id: 'async-1' } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'Started' });
    const task = await waitTask(w, 'async-1');
    expect(task).toMatchObject({ status: 'completed', source: 'webhook', agent_id: agentId, result: 'echo: hello async' });
  });

  it('public URL with asynchronous=false answers the spec 2.7 object', async () => {
    const r = await hook(w, `${publicUrl}?asynchronous=false`, { json: { prompt: 'hello sync' } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(SYNC_RESULT_KEYS);
    expect(r.json).toMatchObject({ agent_id: agentId, status: 'completed', result: 'echo: hello sync', source: 'webhook', execution_attempts: 1 });
    expect(r.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    expect(r.json.finished_at).toMatch(/\+00:00$/);
  });

  it('key form: synchronous by default; key in header or query; agent_id in query or body', async () => {
    const a = await hook(w, `/?agent_id=${agentId}`, { json: { prompt: 'by header' }, headers: { 'x-api-key': w.keyA } });
    expect(a.json).toMatchObject({ status: 'completed', result: 'echo: by header' });
    const b = await hook(w, `/?agent_id=${agentId}&x-api-key=${w.keyA}`, { json: { prompt: 'by query key' } });
    expect(b.json).toMatchObject({ result: 'echo: by query key' });
    const c = await hook(w, '/', { json: { prompt: 'agent in body', agent_id: agentId }, headers: { 'x-api-key': w.keyA } });
    expect(c.json).toMatchObject({ result: 'echo: agent in body' });
    const d = await hook(w, `/?agent_id=${agentId}&asynchronous=true`, { json: { prompt: 'key async' }, headers: { 'x-api-key': w.keyA } });
    expect(d.json).toEqual({ status: 'Started' });
  });

  it('answers every error of spec 7.2 with its exact body', async () => {
    expect(await hook(w, '/', { json: { prompt: 'x' }, headers: { 'x-api-key': w.keyA } })).toMatchObject({ status: 400, json: { detail: 'agent_id is required' } });
    expect(await hook(w, `/?agent_id=${agentId}`, { json: { prompt: 'x' } })).toMatchObject({ status: 401, json: { detail: 'API key not specified' } });
    expect(await hook(w, `/?agent_id=${agentId}`, { json: { prompt: 'x' }, headers: { 'x-api-key': 'agk_wrong' } })).toMatchObject({
      status: 403,
      json: { detail: 'Invalid API key' },
    });
    expect(await hook(w, `/wh_${'A'.repeat(43)}`, { json: { prompt: 'x' } })).toMatchObject({ status: 401, json: { detail: 'API key not specified' } });
    expect(await hook(w, '/wh_short', { json: { prompt: 'x' } })).toMatchObject({ status: 401, json: { detail: 'API key not specified' } });
    // Another organization's valid key is not a key for this agent (spec 7.2 has no 404), nor for a missing one.
    expect(await hook(w, `/?agent_id=${agentId}`, { json: { prompt: 'x' }, headers: { 'x-api-key': w.keyB } })).toMatchObject({
      status: 403,
      json: { detail: 'Invalid API key' },
    });
    expect(await hook(w, '/?agent_id=00000000-0000-7000-8000-000000000000', { json: { prompt: 'x' }, headers: { 'x-api-key': w.keyA } })).toMatchObject({
      status: 403,
      json: { detail: 'Invalid API key' },
    });
  });

  it('refuses both forms with 403 when developer access is off', async () => {
    const id = await createAgent(w, { developer_access: false });
    const url = await enableWebhook(w, id);
    const before = await listTasks(w, id);
    expect(await hook(w, url, { json: { prompt: 'x' } })).toMatchObject({ status: 403, json: { detail: 'Invalid API key' } });
    expect(await hook(w, `/?agent_id=${id}`, { json: { prompt: 'x' }, headers: { 'x-api-key': w.keyA } })).toMatchObject({
      status: 403,
      json: { detail: 'Invalid API key' },
    });
    expect(await listTasks(w, id)).toHaveLength(before.length);
  });

  it('refuses both forms with 403 when the agent is INACTIVE, and a deleted agent\'s URL with 401', async () => {
    const id = await createAgent(w);
    const url = await enableWebhook(w, id);
    expect((await api(w, 'PATCH', `/v1/agents/${id}?deploy=true`, { status: 'INACTIVE' })).status).toBe(200);
    expect(await hook(w, url, { json: { prompt: 'x' } })).toMatchObject({ status: 403, json: { detail: 'Invalid API key' } });
    expect(await hook(w, `/?agent_id=${id}`, { json: { prompt: 'x' }, headers: { 'x-api-key': w.keyA } })).toMatchObject({
      status: 403,
      json: { detail: 'Invalid API key' },
    });
    expect(await listTasks(w, id)).toHaveLength(0);
    expect((await api(w, 'DELETE', `/v1/agents/${id}`)).status).toBe(202);
    expect(await hook(w, url, { json: { prompt: 'x' } })).toMatchObject({ status: 401, json: { detail: 'API key not specified' } });
  });

  it('refuses a busy URL as soon as its agent is deactivated, loses developer access or is deleted', async () => {
    // Calls answered from memory (the URL's binding and agent cached) must see each change from the next call on.
    const id = await createAgent(w);
    const url = await enableWebhook(w, id);
    for (let i = 0; i < 3; i++) expect(await hook(w, `${url}?asynchronous=true`, { json: { prompt: 'x' } })).toMatchObject({ status: 200, json: { status: 'Started' } });
    expect((await api(w, 'PATCH', `/v1/agents/${id}?deploy=true`, { developer_access: false })).status).toBe(200);
    expect(await hook(w, `${url}?asynchronous=true`, { json: { prompt: 'x' } })).toMatchObject({ status: 403, json: { detail: 'Invalid API key' } });
    expect((await api(w, 'PATCH', `/v1/agents/${id}?deploy=true`, { developer_access: true })).status).toBe(200);
    expect(await hook(w, `${url}?asynchronous=true`, { json: { prompt: 'x' } })).toMatchObject({ status: 200 });
    expect((await api(w, 'PATCH', `/v1/agents/${id}?deploy=true`, { status: 'INACTIVE' })).status).toBe(200);
    expect(await hook(w, `${url}?asynchronous=true`, { json: { prompt: 'x' } })).toMatchObject({ status: 403, json: { detail: 'Invalid API key' } });
    expect((await api(w, 'PATCH', `/v1/agents/${id}?deploy=true`, { status: 'ACTIVE' })).status).toBe(200);
    expect(await hook(w, `${url}?asynchronous=true`, { json: { prompt: 'x' } })).toMatchObject({ status: 200 });
    expect(await listTasks(w, id)).toHaveLength(5);
    expect((await api(w, 'DELETE', `/v1/agents/${id}`)).status).toBe(202);
    expect(await hook(w, `${url}?asynchronous=true`, { json: { prompt: 'x' } })).toMatchObject({ status: 401, json: { detail: 'API key not specified' } });
  });

  it('channel settings: enable is idempotent, regenerate kills the old URL at once, disable kills it too', async () => {
    const id = await createAgent(w);
    const off = await api(w, 'GET', `/v1/agents/${id}/webhook`);
    expect(off).toMatchObject({ status: 200, json: { enabled: false, url: null, key_url: `${w.server.container.urls.webhook}/?agent_id=${id}&asynchronous=false` } });
    const first = await api(w, 'POST', `/v1/agents/${id}/webhook`);
    expect(first.json.enabled).toBe(true);
    const secret = /\/wh_([A-Za-z0-9_-]+)$/.exec(first.json.url)![1]!;
    // at least 192 bits of randomness in the secret
    expect(secret.length * 6).toBeGreaterThanOrEqual(192);
    const again = await api(w, 'POST', `/v1/agents/${id}/webhook`);
    expect(again.json).toMatchObject({ enabled: true, url: `${w.server.container.urls.webhook}/wh_********` });
    expect((await api(w, 'GET', `/v1/agents/${id}/webhook`)).json.url).toBe(again.json.url);
    const oldUrl = first.json.url.replace(w.server.container.urls.webhook, w.hooks);
    expect((await hook(w, oldUrl, { json: { prompt: 'still works' } })).json).toEqual({ status: 'Started' });

    const regen = await api(w, 'POST', `/v1/agents/${id}/webhook/regenerate`);
    expect(regen.json.enabled).toBe(true);
    expect(regen.json.url).not.toBe(first.json.url);
    expect(await hook(w, oldUrl, { json: { prompt: 'x' } })).toMatchObject({ status: 401, json: { detail: 'API key not specified' } });
    const newUrl = regen.json.url.replace(w.server.container.urls.webhook, w.hooks);
    expect((await hook(w, newUrl, { json: { prompt: 'new url' } })).json).toEqual({ status: 'Started' });

    const del = await api(w, 'DELETE', `/v1/agents/${id}/webhook`);
    expect(del.json).toMatchObject({ enabled: false, url: null });
    expect((await hook(w, newUrl, { json: { prompt: 'x' } })).status).toBe(401);

    // Another organization and unknown agents: 404; no key: 401.
    expect((await api(w, 'GET', `/v1/agents/${id}/webhook`, undefined, w.keyB)).status).toBe(404);
    expect((await api(w, 'POST', `/v1/agents/${id}/webhook/regenerate`, undefined, w.keyB)).status).toBe(404);
    expect((await api(w, 'POST', '/v1/agents/00000000-0000-7000-8000-000000000000/webhook')).json).toEqual({ detail: 'Agent not found' });
    expect((await fetch(`${w.api}/v1/agents/${id}/webhook`)).status).toBe(401);
  });

  it('refuses bad parameter values with 422 naming them, and creates nothing', async () => {
    const id = await createAgent(w);
    const url = await enableWebhook(w, id);
    const cases: [string, unknown, (string | number)[]][] = [
      [`${url}?asynchronous=maybe`, { prompt: 'x' }, ['query', 'asynchronous']],
      [url, { prompt: 'x', json: 'perhaps' }, ['body', 'json']],
      [`${url}?user_tokens=not-json`, { prompt: 'x' }, ['query', 'user_tokens']],
      [url, { prompt: 'x', user_tokens: '["a"]' }, ['body', 'user_tokens']],
      [`${url}?params_mapping=${encodeURIComponent('[1]')}`, { prompt: 'x' }, ['query', 'params_mapping']],
      [`${url}?params_mapping=${encodeURIComponent('{"agent_id":"a"}')}`, { prompt: 'x' }, ['query', 'params_mapping', 'agent_id']],
      [url, { prompt: 'x', task_id: 'x'.repeat(129) }, ['body', 'task_id']],
      [url, { prompt: { nested: true } }, ['body', 'prompt']],
      [url, { prompt: 'x', files: ['https://example.com/a.pdf'] }, ['body', 'files']],
      [url, { prompt: 'x', file: 'https://example.com/a.pdf' }, ['body', 'file']],
      [url, {}, ['body', 'prompt']],
    ];
    for (const [u, body, loc] of cases) {
      const r = await hook(w, u, { json: body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.detail.map((d: any) => d.loc)).toContainEqual(loc);
    }
    expect(await hook(w, url, { json: [1, 2] })).toMatchObject({ status: 422 });
    expect(await hook(w, url, { json: undefined, headers: { 'content-type': 'application/json' } })).toMatchObject({ status: 422 });
    const bad = await fetch(url.replace(w.server.container.urls.webhook, w.hooks), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":' });
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail[0].type).toBe('json_invalid');
    expect(await listTasks(w, id)).toHaveLength(0);
  });

  it('accepts booleans as true/false/1/0/yes/no in any case', async () => {
    for (const v of ['FALSE', '0', 'No', 'false']) {
      const r = await hook(w, `${publicUrl}?asynchronous=${v}`, { json: { prompt: `bool ${v}` } });
      expect(r.json.status, v).toBe('completed');
    }
    for (const v of ['TRUE', '1', 'Yes']) expect((await hook(w, `${publicUrl}?asynchronous=${v}`, { json: { prompt: 'b' } })).json).toEqual({ status: 'Started' });
    expect((await hook(w, publicUrl, { json: { prompt: 'json bool', asynchronous: false } })).json.status).toBe('completed');
  });

  it('getter and json: extract a field, parse the result, null for a missing path', async () => {
    const payload = JSON.stringify({ answer: { value: 42 }, items: [{ n: 'first' }, { n: 'second' }] });
    const base = `${publicUrl}?asynchronous=false`;
    const parsed = await hook(w, `${base}&json=true`, { json: { prompt: `json:${payload}` } });
    expect(parsed.json.result).toEqual(JSON.parse(payload));
    expect((await hook(w, `${base}&json=true&getter=result.answer.value`, { json: { prompt: `json:${payload}` } })).json).toBe(42);
    expect((await hook(w, `${base}&json=yes&getter=result.items.1.n`, { json: { prompt: `json:${payload}` } })).json).toBe('second');
    expect((await hook(w, `${base}&json=true&getter=result.nope.deeper`, { json: { prompt: `json:${payload}` } })).json).toBeNull();
    expect((await hook(w, `${base}&getter=status`, { json: { prompt: 'plain' } })).json).toBe('completed');
    // Without json=true the result stays a string; json=true on a non-JSON result returns it unchanged.
    expect((await hook(w, `${base}&getter=result`, { json: { prompt: `json:${payload}` } })).json).toBe(payload);
    expect((await hook(w, `${base}&json=true&getter=result`, { json: { prompt: 'not json' } })).json).toBe('echo: not json');
  });

  it('params_mapping reads a nested chat-style payload; numbers become strings; the query wins over the body', async () => {
    const mapping = encodeURIComponent(
      JSON.stringify({ prompt: 'message.text', task_id: 'message.chat.id', user_first_name: 'message.from.first_name', user_id: 'message.from.id', user_email: 'missing.path' }),
    );
    const chat = { update_id: 9, message: { text: 'hi from the chat app', chat: { id: 777001 }, from: { id: 55, first_name: 'Ann' } } };
    const r = await hook(w, `${publicUrl}?asynchronous=false&params_mapping=${mapping}`, { json: chat });
    expect(r.json).toMatchObject({ id: '777001', result: 'echo: hi from the chat app' });
    const task = (await api(w, 'GET', '/v1/tasks/777001')).json;
    expect(task.input.user).toMatchObject({ id: '55', first_name: 'Ann', email: null });
    // The user's fields reach the model "for personalization" (docs/memory.md).
    const sent = w.llm.requests.find((q) => q.lastUserText === 'hi from the chat app')!;
    expect(sent.system).toContain('## About the user\nThe person you are talking to (as given by the application that called you):\nName: Ann\nUser id: 55');
    // Precedence: query > body > params_mapping.
    const body = { prompt: 'body prompt', message: { text: 'mapped prompt', chat: { id: 777002 } } };
    const m2 = encodeURIComponent(JSON.stringify({ prompt: 'message.text', task_id: 'message.chat.id' }));
    expect((await hook(w, `${publicUrl}?asynchronous=false&params_mapping=${m2}`, { json: body })).json.result).toBe('echo: body prompt');
    expect((await hook(w, `${publicUrl}?asynchronous=false&prompt=query%20prompt&params_mapping=${m2}`, { json: body })).json.result).toBe('echo: query prompt');
    expect((await hook(w, `${publicUrl}?asynchronous=false`, { json: { prompt: 'body wins?', asynchronous: true } })).json.result).toBe('echo: body wins?');
  });

  it('passes extra body fields to the agent as context', async () => {
    const r = await hook(w, `${publicUrl}?asynchronous=false`, { json: { prompt: 'with context', order_id: 'ORD-4411', customer: { tier: 'gold' } } });
    const task = (await api(w, 'GET', `/v1/tasks/${r.json.id}`)).json;
    expect(JSON.parse(task.additional_context)).toEqual({ order_id: 'ORD-4411', customer: { tier: 'gold' } });
    expect(llmSaw(w)).toContain('ORD-4411');
  });

  it('continues a conversation with task_id: same task, earlier messages reach the model', async () => {
    await hook(w, `${publicUrl}?asynchronous=false`, { json: { prompt: 'remember KIWI', task_id: 'chat-42' } });
    const n = w.llm.requests.length;
    const second = await hook(w, `${publicUrl}?asynchronous=false`, { json: { prompt: 'what did I say?', task_id: 'chat-42' } });
    expect(second.json).toMatchObject({ id: 'chat-42', status: 'completed', result: 'echo: what did I say?' });
    expect(JSON.stringify(w.llm.requests.slice(n).map((q) => q.body.messages))).toContain('remember KIWI');
    expect((await listTasks(w, agentId)).filter((t) => t.id === 'chat-42')).toHaveLength(1);
  });

  it('reads form-urlencoded and multipart text bodies like JSON ones', async () => {
    const form = await hook(w, publicUrl, { form: { prompt: 'from a form', asynchronous: 'false', ticket: 'T-9' } });
    expect(form.json).toMatchObject({ status: 'completed', result: 'echo: from a form' });
    const repeated = await fetch(publicUrl.replace(w.server.container.urls.webhook, w.hooks), {
      method: 'POST',
      body: new URLSearchParams([['prompt', 'first value'], ['prompt', 'second value'], ['asynchronous', 'false']]),
    });
    expect((await repeated.json()).result).toBe('echo: first value');
    expect(JSON.parse((await api(w, 'GET', `/v1/tasks/${form.json.id}`)).json.additional_context)).toEqual({ ticket: 'T-9' });
    const fd = new FormData();
    fd.set('prompt', 'from multipart');
    fd.set('asynchronous', 'no');
    const multi = await hook(w, publicUrl, { multipart: fd });
    expect(multi.json).toMatchObject({ status: 'completed', result: 'echo: from multipart' });
  });

  it('answers 503 with Retry-After when the public URL lookup fails', async () => {
    // The lookup's table vanishing is a database failure the receiver cannot tell from an outage.
    const k = w.server.container.db.kysely;
    await sql`alter table webhook_channels rename to webhook_channels_away`.execute(k);
    try {
      const r = await hook(w, publicUrl, { json: { prompt: 'x' } });
      expect(r.status).toBe(503);
      expect(r.json).toEqual({ detail: 'Public webhook lookup temporarily unavailable' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await sql`alter table webhook_channels_away rename to webhook_channels`.execute(k);
    }
    expect((await hook(w, publicUrl, { json: { prompt: 'back' } })).json).toEqual({ status: 'Started' });
  });
});
