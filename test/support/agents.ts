import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { newId } from '../../src/lib/ids.js';

/**
 * Agents for tests: the one way to create one through the API (in-process or over a socket), and the fields of an
 * agent that talks to a scripted LLM server of test/fakes.
 */

/** The credential every scripted-LLM agent sends (`Authorization: Bearer sk-test`). */
export const SCRIPTED_LLM_KEY = 'sk-test';

/**
 * Fields of an agent whose model is a scripted LLM server at `baseUrl` (test/fakes/openai-server.ts, or
 * anthropic-server.ts with `model_provider: 'anthropic'` in `extra`). `extra` wins over every field.
 */
export function scriptedAgentFields(baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const provider = typeof extra.model_provider === 'string' ? extra.model_provider : 'openai';
  return {
    model_provider: provider,
    model_name: provider === 'anthropic' ? 'claude-test' : 'gpt-test',
    llm_api_base: baseUrl,
    llm_credentials: { name: 'key', description: null, value: SCRIPTED_LLM_KEY },
    ...extra,
  };
}

/** Sends one `POST /v1/agents` body and answers the status and raw body. */
export type AgentPoster = (body: Record<string, unknown>) => Promise<{ status: number; body: string }>;

type Inject = (method: InjectOptions['method'], url: string, body?: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;

/** Through an in-process app's `req` (Fastify inject); `key` replaces the app's default key. */
export function injectPoster(req: Inject, key?: string): AgentPoster {
  return async (body) => {
    const r = await req('POST', '/v1/agents', body, key ? { 'x-api-key': key } : undefined);
    return { status: r.statusCode, body: r.body };
  };
}

/** Over a socket to a running server's API listener. */
export function fetchPoster(apiUrl: string, key: string): AgentPoster {
  return async (body) => {
    const r = await fetch(`${apiUrl}/v1/agents`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, body: await r.text() };
  };
}

/** A name no other agent of the test has (names are unique per organization). */
export function uniqueAgentName(prefix = 'agent'): string {
  return `${prefix}-${newId()}`;
}

/** Creates an agent (a unique name unless `fields` has one) and answers it as the API showed it; throws unless 201. */
export async function postAgent(post: AgentPoster, fields: Record<string, unknown> = {}, namePrefix?: string): Promise<Record<string, any>> {
  const r = await post({ name: uniqueAgentName(namePrefix), ...fields });
  if (r.status !== 201) throw new Error(`create agent: ${r.status} ${r.body}`);
  return JSON.parse(r.body) as Record<string, any>;
}
