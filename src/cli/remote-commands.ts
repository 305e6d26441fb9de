import { parseArgs } from 'node:util';
import { cliTarget } from '../config.js';
import { ApiClient, ApiError } from './api-client.js';

/**
 * The commands that talk to a running server over its /v1 API (URL and key from AGENTRY_URL / AGENTRY_API_KEY or
 * --url / --api-key): agents list|get, invoke, tasks list|get, keys list|revoke. Lists print one line per item
 * (tab-separated, for a terminal or `cut`), single resources print JSON; --json prints the server's answer as is.
 * Exit codes: 0 done, 1 the server refused or the task did not complete, 2 bad usage.
 */

export const REMOTE_USAGE = `  agents list [--page N] [--per-page N] [--json]
  agents get AGENT_ID           the agent's configuration (JSON)
  invoke AGENT_ID "prompt" [--async] [--stream] [--json] [--version N|draft]
                                waits for the result and prints it; --async prints the task id at once;
                                --stream prints the answer as it is written
  tasks list [--agent AGENT_ID] [--status STATUS] [--page N] [--per-page N] [--json]
  tasks get TASK_ID             the task (JSON)
  keys list [--json]            API keys of the organization (no secrets)
  keys revoke KEY_ID
remote commands use AGENTRY_URL (default http://localhost:8080) and AGENTRY_API_KEY, or --url and --api-key;
AGENTRY_CLI_TIMEOUT_MS (default 600000) bounds one request`;

export interface Output {
  /** A line to stdout. */
  out(text: string): void;
  /** Text to stdout as it comes (streamed answers). */
  write(text: string): void;
  err(text: string): void;
}

export class UsageError extends Error {}

const COMMON = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean' },
  page: { type: 'string' },
  'per-page': { type: 'string' },
} as const;

/** Runs `command sub ...args`; undefined when the command is not a remote one. */
export async function runRemote(argv: string[], io: Output, env: NodeJS.ProcessEnv = process.env): Promise<number | undefined> {
  const [command, ...rest] = argv;
  if (command !== 'agents' && command !== 'invoke' && command !== 'tasks' && command !== 'keys') return undefined;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { ...COMMON, async: { type: 'boolean' }, stream: { type: 'boolean' }, version: { type: 'string' }, agent: { type: 'string' }, status: { type: 'string' } },
    });
  } catch (e) {
    io.err(`${(e as Error).message}\n${REMOTE_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  let target;
  try {
    target = cliTarget(env);
  } catch (e) {
    io.err(`agentry: ${(e as Error).message}`);
    return 2;
  }
  const client = new ApiClient((values.url ?? target.url).replace(/\/+$/, ''), values['api-key'] ?? target.apiKey, fetch, target.timeoutMs);
  const print = (v: unknown) => io.out(JSON.stringify(v, null, 2));
  try {
    switch (command) {
      case 'agents':
        return await agents(client, positionals, values, io, print);
      case 'invoke':
        return await invoke(client, positionals, values, io, print);
      case 'tasks':
        return await tasks(client, positionals, values, io, print);
      case 'keys':
        return await keys(client, positionals, values, io, print);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`${e.message}\n${REMOTE_USAGE}`);
      return 2;
    }
    if (e instanceof ApiError) {
      io.err(`agentry: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

type Values = { json?: boolean; page?: string; 'per-page'?: string; async?: boolean; stream?: boolean; version?: string; agent?: string; status?: string };
type Print = (v: unknown) => void;

interface Paged<T> {
  items: T[];
  total: number;
  page: number;
  total_pages: number;
}

async function agents(client: ApiClient, [sub, id]: string[], v: Values, io: Output, print: Print): Promise<number> {
  if (sub === 'list') {
    const page = await client.json<Paged<Record<string, unknown>>>('GET', `/v1/agents${paging(v)}`);
    if (v.json) return print(page), 0;
    for (const a of page.items) io.out(row(a.id, a.name, a.status, `${a.model_provider ?? ''}/${a.model_name ?? ''}`));
    io.err(`page ${page.page} of ${page.total_pages} (${page.total} agents)`);
    return 0;
  }
  if (sub === 'get' && id) return print(await client.json('GET', `/v1/agents/${enc(id)}`)), 0;
  throw new UsageError(sub === 'get' ? 'agents get needs an AGENT_ID' : 'agents: list or get');
}

async function invoke(client: ApiClient, [agentId, prompt]: string[], v: Values, io: Output, print: Print): Promise<number> {
  if (!agentId || prompt === undefined) throw new UsageError('invoke needs an AGENT_ID and a prompt');
  if (v.async && v.stream) throw new UsageError('invoke: --async and --stream exclude each other');
  const version = v.version ? `?version=${encodeURIComponent(v.version)}` : '';
  const body = { input: { text: prompt } };
  const path = `/v1/agents/${enc(agentId)}/invoke`;
  if (v.async) {
    const task = await client.json<{ id: string }>('POST', `${path}/async${version}`, body);
    if (v.json) print(task);
    else io.out(task.id);
    return 0;
  }
  if (v.stream) {
    let finished: { status?: string; result?: string } | undefined;
    let streamed = false;
    await client.stream(`${path}/stream${version}`, body, (e) => {
      const event = e as { type?: string; data?: Record<string, unknown> };
      if (v.json) return io.out(JSON.stringify(event));
      if (event.type === 'chunk' && typeof event.data?.text === 'string') {
        io.write(event.data.text);
        streamed = true;
      } else if (event.type === 'task_finished') finished = event.data as typeof finished;
    });
    if (!v.json) {
      // A json answer (or one that did not stream) is only in the final task.
      if (!streamed && finished?.result) io.out(finished.result);
      else if (streamed) io.out('');
    }
    if (finished?.status !== 'completed') io.err(`task ${finished?.status ?? 'ended without finishing'}`);
    return finished?.status === 'completed' ? 0 : 1;
  }
  const task = await client.json<{ id: string; status: string; result: string | null }>('POST', `${path}${version}`, body);
  if (v.json) print(task);
  else if (task.result !== null) io.out(task.result);
  if (task.status !== 'completed') io.err(`task ${task.id} ${task.status}`);
  return task.status === 'completed' ? 0 : 1;
}

async function tasks(client: ApiClient, [sub, id]: string[], v: Values, io: Output, print: Print): Promise<number> {
  if (sub === 'list') {
    const q = new URLSearchParams(paging(v).slice(1));
    if (v.agent) q.set('agent_id', v.agent);
    if (v.status) q.set('status', v.status);
    const page = await client.json<Paged<Record<string, unknown>>>('GET', `/v1/tasks${q.size ? `?${q}` : ''}`);
    if (v.json) return print(page), 0;
    for (const t of page.items) io.out(row(t.id, t.agent_id, t.status, t.created_at, t.title));
    io.err(`page ${page.page} of ${page.total_pages} (${page.total} tasks)`);
    return 0;
  }
  if (sub === 'get' && id) return print(await client.json('GET', `/v1/tasks/${enc(id)}`)), 0;
  throw new UsageError(sub === 'get' ? 'tasks get needs a TASK_ID' : 'tasks: list or get');
}

/** GET /v1/api_keys (a list, or a page of them) and DELETE /v1/api_keys/{id}. */
async function keys(client: ApiClient, [sub, id]: string[], v: Values, io: Output, print: Print): Promise<number> {
  if (sub === 'list') {
    const answer = await client.json<Record<string, unknown>[] | Paged<Record<string, unknown>>>('GET', '/v1/api_keys');
    if (v.json) return print(answer), 0;
    for (const k of Array.isArray(answer) ? answer : answer.items) io.out(row(k.id, k.name, k.role, k.created_at, k.revoked_at ? `revoked ${k.revoked_at}` : ''));
    return 0;
  }
  if (sub === 'revoke' && id) {
    await client.json('DELETE', `/v1/api_keys/${enc(id)}`);
    io.err(`revoked ${id}`);
    return 0;
  }
  // `keys create --org` (local, on the database) is handled by main.ts before this.
  throw new UsageError(sub === 'revoke' ? 'keys revoke needs a KEY_ID' : 'keys: create, list or revoke');
}

function paging(v: Values): string {
  const q = new URLSearchParams();
  if (v.page) q.set('page', v.page);
  if (v['per-page']) q.set('per_page', v['per-page']);
  return q.size ? `?${q}` : '';
}

function row(...cells: unknown[]): string {
  return cells.map((c) => (c === null || c === undefined ? '' : String(c).replace(/[\t\n]/g, ' '))).join('\t');
}

function enc(id: string): string {
  return encodeURIComponent(id);
}
