import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DBS } from '../support/harness.js';
import { api, createAgent, llmSaw, startWebhookWorld, waitTask, type WebhookWorld } from '../webhooks/webhook-helpers.js';

/**
 * The invoke routes take multipart/form-data (the console's playground attaches files this way): the files are
 * extracted into the model's context like webhook uploads; a refused form stores nothing.
 */
describe.each(TEST_DBS)('invoke with attached files (%s)', (kind) => {
  let w: WebhookWorld;
  let agentId: string;
  let orgA: string;
  const blobCount = () => {
    const dir = join(w.server.container.config.dataDir, 'files', orgA);
    return existsSync(dir) ? readdirSync(dir).length : 0;
  };
  const post = (path: string, fd: FormData) => fetch(`${w.api}${path}`, { method: 'POST', headers: { 'x-api-key': w.keyA }, body: fd });
  const form = (fields: Record<string, string>, file?: { name: string; text: string }) => {
    const fd = new FormData();
    for (const [k, v] of Object.entries(fields)) fd.set(k, v);
    if (file) fd.append('files', new Blob([file.text], { type: 'text/plain' }), file.name);
    return fd;
  };

  beforeAll(async () => {
    w = await startWebhookWorld(kind);
    w.llm.handle(() => ({ text: 'read it' }));
    orgA = (await w.server.container.orgs.findOrganizationByName('org-a'))!.id;
    agentId = await createAgent(w);
  });
  afterAll(async () => w?.close());

  it('async: the file is stored, its text reaches the model, and a follow-up with the task id continues the thread', async () => {
    const r = await post(`/v1/agents/${agentId}/invoke/async`, form({ text: 'Summarise the note' }, { name: 'note.txt', text: 'the zebra code is 7731' }));
    expect(r.status).toBe(200);
    const task = await r.json();
    expect(task.input.text).toBe('Summarise the note');
    expect(task.input.files).toHaveLength(1);
    expect(task.input.files[0]).toMatchObject({ name: 'note.txt', mime_type: 'text/plain' });
    expect(task.input.files[0].url).toMatch(/\/v1\/files\/[0-9a-f-]+\?expires=\d+&sig=/);
    await waitTask(w, task.id);
    expect(llmSaw(w)).toContain('the zebra code is 7731');

    const next = await post(`/v1/agents/${agentId}/invoke/async`, form({ text: 'And again?', id: task.id }));
    expect(next.status).toBe(200);
    expect((await next.json()).id).toBe(task.id);
    await waitTask(w, task.id);
    const thread = (await api(w, 'GET', `/v1/tasks/${task.id}/thread`)).json;
    expect(JSON.stringify(thread)).toContain('And again?');
    expect(JSON.stringify(thread)).toContain('Summarise the note');
  });

  it('stream: the run is streamed as events ending with task_finished', async () => {
    const r = await post(`/v1/agents/${agentId}/invoke/stream`, form({ text: 'stream me' }, { name: 'a.txt', text: 'streamed attachment' }));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/event-stream');
    const text = await r.text();
    const types = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!).type);
    expect(types[0]).toBe('task_created');
    expect(types.at(-1)).toBe('task_finished');
    expect(text).toContain('a.txt');
  });

  it('a refused form (bad output_format, unknown agent) stores no file', async () => {
    const before = blobCount();
    const bad = await post(`/v1/agents/${agentId}/invoke/async`, form({ text: 'x', output_format: 'voice' }, { name: 'n.txt', text: 'never stored' }));
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail[0].loc).toEqual(['body', 'output_format']);
    const missing = await post(`/v1/agents/00000000-0000-4000-8000-000000000000/invoke/async`, form({ text: 'x' }, { name: 'n.txt', text: 'never kept' }));
    expect(missing.status).toBe(404);
    expect(blobCount()).toBe(before);
  });

  /** What the model was sent for one task's run, and the URL of its one attached file. */
  const sentFor = async (taskId: string, before: number) => {
    const task = await waitTask(w, taskId);
    return { seen: JSON.stringify(w.llm.requests.slice(before).map((q) => q.body.messages)), url: task.input.files[0].url as string };
  };

  it('disable_attachment_injection keeps the extracted text out of the prompt, the URL in; without it the text is there', async () => {
    for (const [flag, injected] of [['true', false], ['YES', false], ['1', false], ['false', true], ['', true], [undefined, true]] as const) {
      const before = w.llm.requests.length;
      const fields: Record<string, string> = { text: 'What is in the file?' };
      if (flag !== undefined) fields.disable_attachment_injection = flag;
      const r = await post(`/v1/agents/${agentId}/invoke/async`, form(fields, { name: 'walrus.txt', text: `the walrus code is ${flag}-5519` }));
      expect(r.status, String(flag)).toBe(200);
      const { seen, url } = await sentFor((await r.json()).id, before);
      expect(seen, String(flag)).toContain(url);
      expect(seen.includes(`the walrus code is ${flag}-5519`), String(flag)).toBe(injected);
    }
  });

  it('disable_attachment_injection acts on the synchronous and streamed forms too', async () => {
    let before = w.llm.requests.length;
    const sync = await post(`/v1/agents/${agentId}/invoke`, form({ text: 'sync', disable_attachment_injection: 'true' }, { name: 's.txt', text: 'sync-secret-8812' }));
    expect(sync.status).toBe(200);
    let sent = await sentFor((await sync.json()).id, before);
    expect(sent.seen).toContain(sent.url);
    expect(sent.seen).not.toContain('sync-secret-8812');

    before = w.llm.requests.length;
    const stream = await post(`/v1/agents/${agentId}/invoke/stream`, form({ text: 'stream', disable_attachment_injection: 'true' }, { name: 't.txt', text: 'stream-secret-4410' }));
    expect(stream.status).toBe(200);
    const created = JSON.parse((await stream.text()).match(/^data: (.*)$/m)![1]!);
    sent = await sentFor(created.task_id, before);
    expect(sent.seen).toContain(sent.url);
    expect(sent.seen).not.toContain('stream-secret-4410');
  });

  it('an unreadable disable_attachment_injection is a 422 at its field, storing nothing and running nothing', async () => {
    const [blobs, calls] = [blobCount(), w.llm.requests.length];
    const r = await post(`/v1/agents/${agentId}/invoke/async`, form({ text: 'x', disable_attachment_injection: 'perhaps' }, { name: 'n.txt', text: 'never stored' }));
    expect(r.status).toBe(422);
    expect((await r.json()).detail).toEqual([{ loc: ['body', 'disable_attachment_injection'], msg: 'Input should be a valid boolean, unable to interpret input', type: 'bool_parsing' }]);
    expect(blobCount()).toBe(blobs);
    expect(w.llm.requests.length).toBe(calls);
  });

  it('the JSON form takes disable_attachment_injection as a boolean, as xpander\'s create-task body does', async () => {
    const ok = await api(w, 'POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'hi', files: ['https://example.com/a.pdf'] }, disable_attachment_injection: true });
    expect(ok.status).toBe(200);
    await waitTask(w, ok.json.id);
    const row = await w.server.container.db.kysely.selectFrom('tasks').select('disable_attachment_injection').where('id', '=', ok.json.id).executeTakeFirstOrThrow();
    expect(Number(row.disable_attachment_injection)).toBe(1);
    const bad = await api(w, 'POST', `/v1/agents/${agentId}/invoke/async`, { input: { text: 'hi' }, disable_attachment_injection: 'sometimes' });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['body', 'disable_attachment_injection']);
  });

  it('the form takes output_schema, user_tokens and the user as the JSON body does; an unknown part is refused, storing nothing', async () => {
    const schema = { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] };
    const r = await post(
      `/v1/agents/${agentId}/invoke/async`,
      form({ text: 'x', output_format: 'json', output_schema: JSON.stringify(schema), user_tokens: JSON.stringify({ 'mcp-1': 'tok-1' }), user_id: 'u-42', user_email: 'ada@example.com' }),
    );
    expect(r.status).toBe(200);
    const task = await r.json();
    expect(task.input.user).toMatchObject({ id: 'u-42', email: 'ada@example.com' });
    expect(task.output_schema).toEqual(schema);
    const row = await w.server.container.db.kysely.selectFrom('tasks').select(['sealed_user_tokens', 'user_id']).where('id', '=', task.id).executeTakeFirstOrThrow();
    expect(row.user_id).toBe('u-42');
    expect(row.sealed_user_tokens).not.toBeNull();
    await waitTask(w, task.id);

    const whole = await post(`/v1/agents/${agentId}/invoke/async`, form({ text: 'x', user: JSON.stringify({ id: 'u-7', first_name: 'Ada' }) }));
    expect(whole.status).toBe(200);
    const wholeTask = await whole.json();
    expect(wholeTask.input.user).toMatchObject({ id: 'u-7', first_name: 'Ada' });
    await waitTask(w, wholeTask.id);

    const blobs = blobCount();
    const unknown = await post(`/v1/agents/${agentId}/invoke/async`, form({ text: 'x', output_shema: '{}' }, { name: 'n.txt', text: 'never stored' }));
    expect(unknown.status).toBe(422);
    expect((await unknown.json()).detail).toEqual([{ loc: ['body', 'output_shema'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
    const badJson = await post(`/v1/agents/${agentId}/invoke/async`, form({ text: 'x', user_tokens: '{not json' }, { name: 'n.txt', text: 'never stored' }));
    expect(badJson.status).toBe(422);
    expect((await badJson.json()).detail[0]).toMatchObject({ loc: ['body', 'user_tokens'], type: 'json_invalid' });
    const badTokens = await post(`/v1/agents/${agentId}/invoke/async`, form({ text: 'x', user_tokens: JSON.stringify({ 'mcp-1': 5 }) }));
    expect(badTokens.status).toBe(422);
    expect(blobCount()).toBe(blobs);
  });

  it('a JSON invocation without a body is still a 422', async () => {
    const r = await fetch(`${w.api}/v1/agents/${agentId}/invoke/async`, { method: 'POST', headers: { 'x-api-key': w.keyA } });
    expect(r.status).toBe(422);
  });
});
