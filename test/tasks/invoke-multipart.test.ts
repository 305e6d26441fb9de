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

  it('a JSON invocation without a body is still a 422', async () => {
    const r = await fetch(`${w.api}/v1/agents/${agentId}/invoke/async`, { method: 'POST', headers: { 'x-api-key': w.keyA } });
    expect(r.status).toBe(422);
  });
});
