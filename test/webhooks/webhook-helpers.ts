import type { Logger } from '../../src/lib/logger.js';
import type { RunningServer } from '../../src/server.js';
import { startOpenAIServer, type OpenAIServer } from '../fakes/openai-server.js';
import { fetchPoster, postAgent, scriptedAgentFields } from '../support/agents.js';
import { createTestEnv, startTestServer, type DbKind, type TestEnv } from '../support/harness.js';

/** A real server (api, webhooks, worker) on ephemeral ports, a scripted LLM, and two organizations' keys. */
export interface WebhookWorld {
  env: TestEnv;
  server: RunningServer;
  llm: OpenAIServer;
  api: string;
  hooks: string;
  keyA: string;
  keyB: string;
  close(): Promise<void>;
}

export async function startWebhookWorld(kind: DbKind, extraEnv: Record<string, string> = {}, log?: Logger): Promise<WebhookWorld> {
  const llm = await startOpenAIServer();
  const env = await createTestEnv(kind, { AGENTRY_EGRESS_ALLOW: '127.0.0.1', AGENTRY_SYNC_TIMEOUT_MS: '20000', ...extraEnv });
  const server = await startTestServer(env, {}, log);
  const keyA = (await server.container.orgs.createApiKey('org-a')).key;
  const keyB = (await server.container.orgs.createApiKey('org-b')).key;
  return {
    env,
    server,
    llm,
    api: server.apiUrl!,
    hooks: server.webhookUrl!,
    keyA,
    keyB,
    async close() {
      await server.stop();
      await llm.close();
      await env.cleanup();
    },
  };
}

export async function api(w: WebhookWorld, method: string, path: string, body?: unknown, key = w.keyA): Promise<{ status: number; json: any }> {
  const r = await fetch(w.api + path, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : undefined };
}

/** An agent of org A that talks to the scripted LLM (test/support/agents.ts); returns its id. */
export async function createAgent(w: WebhookWorld, overrides: Record<string, unknown> = {}, key = w.keyA): Promise<string> {
  const fields = scriptedAgentFields(w.llm.baseUrl, { model_name: 'gpt-4o', ...overrides });
  return (await postAgent(fetchPoster(w.api, key), fields)).id as string;
}

/** Enables the public URL and returns it. */
export async function enableWebhook(w: WebhookWorld, agentId: string): Promise<string> {
  const r = await api(w, 'POST', `/v1/agents/${agentId}/webhook`);
  if (r.status !== 200 || !r.json.url) throw new Error(`enable: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.url;
}

export interface Answer {
  status: number;
  json: any;
  headers: Headers;
}

/** POSTs to the webhook receiver; `url` is absolute or a path below it. */
export async function hook(w: WebhookWorld, url: string, init: { json?: unknown; form?: Record<string, string>; multipart?: FormData; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  let body: BodyInit | undefined;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  } else if (init.form) {
    body = new URLSearchParams(init.form);
  } else if (init.multipart) {
    body = init.multipart;
  }
  const r = await fetch(url.startsWith('http') ? url : w.hooks + url, { method: 'POST', headers, body });
  const text = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: r.status, json, headers: r.headers };
}

/** Every request the LLM received, as one searchable text. */
export function llmSaw(w: WebhookWorld): string {
  return w.llm.requests.map((r) => JSON.stringify(r.body.messages)).join('\n');
}

/** Polls a task until it is final. */
export async function waitTask(w: WebhookWorld, taskId: string, key = w.keyA, timeoutMs = 20_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await api(w, 'GET', `/v1/tasks/${encodeURIComponent(taskId)}`, undefined, key);
    if (r.status === 200 && ['completed', 'failed', 'error', 'stopped'].includes(r.json.status)) return r.json;
    if (Date.now() > until) throw new Error(`task ${taskId} not final: ${JSON.stringify(r.json)}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

export async function listTasks(w: WebhookWorld, agentId: string, key = w.keyA): Promise<any[]> {
  const r = await api(w, 'GET', `/v1/agents/${agentId}/tasks?per_page=50`, undefined, key);
  if (r.status !== 200) throw new Error(`tasks: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.items;
}
