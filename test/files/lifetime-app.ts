/** The app of the files' lifetime tests (file-lifetime, knowledge-file-lifetime, s3-stalls), whose clock a test moves. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import { ScriptedRunner } from '../tasks/tasks-harness.js';
import { createTestApp, type TestAppOptions } from '../support/harness.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** A multipart body as fetch would send it, for inject. */
export async function multipart(fields: Record<string, string>, files: { name: string; text: string }[]): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.set(k, v);
  for (const f of files) fd.append('files', new Blob([f.text], { type: 'text/plain' }), f.name);
  const r = new Response(fd);
  return { payload: Buffer.from(await r.arrayBuffer()), headers: { 'content-type': r.headers.get('content-type')! } };
}

/**
 * An in-process app (API, webhooks, a worker with a scripted runner) whose clock a test moves forward, with one agent
 * of org A and its public webhook URL.
 */
export async function lifetimeApp(kind: 'sqlite' | 'postgres', opts: TestAppOptions & { worker?: boolean } = {}) {
  const clock = { offset: 0 };
  const t = await createTestApp(kind, {
    roles: opts.worker === false ? 'api,webhooks' : 'api,webhooks,worker',
    runner: new ScriptedRunner(),
    startWorker: opts.worker !== false,
    clock: { now: () => Date.now() + clock.offset },
    ...opts,
    env: { AGENTRY_TASK_RETENTION_DAYS: '1', ...opts.env },
  });
  const agentId = await t.createAgent({ model_provider: 'openai', llm_credentials: { name: 'k', value: 'sk-x' }, should_stage_before_publish: false });
  const hookUrl = new URL((await t.req('POST', `/v1/agents/${agentId}/webhook`)).json().url as string);
  const k = t.c.db.kysely as unknown as Kysely<any>;
  return {
    t,
    clock,
    agentId,
    /** The app's database, for what a test checks or breaks directly. */
    k,
    /** POST /invoke/async with files; the pending task. */
    async invoke(text: string, files: { name: string; text: string }[], id?: string): Promise<{ id: string; input: { files: { id: string; url: string }[] } }> {
      const { payload, headers } = await multipart({ text, ...(id ? { id } : {}) }, files);
      const r = await t.app.inject({ method: 'POST', url: `/v1/agents/${agentId}/invoke/async`, payload, headers: { ...headers, 'x-api-key': t.keyA } });
      expect(r.statusCode, r.body).toBe(200);
      return r.json();
    },
    /** An asynchronous webhook call with files (its task goes through the task inbox); the task id. */
    async webhook(prompt: string, files: { name: string; text: string }[], fields: Record<string, string> = {}): Promise<string> {
      const { payload, headers } = await multipart({ prompt, asynchronous: 'true', ...fields }, files);
      const r = await t.webhooks.inject({ method: 'POST', url: hookUrl.pathname, payload, headers });
      expect(r.statusCode, r.body).toBe(200);
      return String(r.headers['x-task-id']);
    },
    /** The file rows of org A's given ids that still exist, with their task. */
    async rows(ids: string[]): Promise<{ id: string; task_id: string | null }[]> {
      if (ids.length === 0) return [];
      return k.selectFrom('files').select(['id', 'task_id']).where('organization_id', '=', t.orgA).where('id', 'in', ids).orderBy('id').execute();
    },
    blobExists: (id: string) => existsSync(join(t.testEnv.dataDir, 'files', t.orgA, id)),
    async pendingDeletions(): Promise<string[]> {
      return (await k.selectFrom('file_blob_deletions').select('file_id').execute()).map((r) => r.file_id as string);
    },
    /** GET of a presigned URL (no key). */
    signed: (url: string) => {
      const u = new URL(url);
      return t.app.inject({ method: 'GET', url: u.pathname + u.search });
    },
    metrics: async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body,
  };
}

export type LifetimeApp = Awaited<ReturnType<typeof lifetimeApp>>;
