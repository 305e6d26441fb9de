import type { Clock } from '../lib/clock.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import type { RunOutcome, RunRequest, TaskRunner } from '../runtime/task-runner.js';
import { readPath } from '../lib/dot-path.js';
import { ConnectivityError, parseConnectivity, type CurlConnectivity } from './connectivity.js';
import {
  aborted,
  describeFailure,
  outcome,
  outputProblem,
  promptOf,
  invocationContext,
  contextText,
  readBounded,
  RemoteAgentError,
  remoteHeaders,
  runFetch,
  runSignal,
  traced,
  type Fetch,
  type SecretReader,
} from './remote-call.js';

export interface CurlRunnerDeps {
  /** The egress-checked fetch (docs/contract.md#egress). */
  fetch: Fetch;
  secrets: SecretReader;
  clock: Clock;
  schemaChecker: SchemaChecker;
}

/**
 * `curl` agents: one HTTP request per run, described by connectivity_details (URL, method, headers, where the prompt
 * goes, where the answer is read). The answer is the task result; a non-2xx status, an answer that is not JSON when
 * a `response_path` needs JSON, a missing path, a timeout or a refused credential end the task `error` with a
 * sentence saying which.
 */
export class CurlAgentRunner implements TaskRunner {
  constructor(private readonly deps: CurlRunnerDeps) {}

  async run(req: RunRequest): Promise<RunOutcome> {
    const { clock } = this.deps;
    const prompt = promptOf(req);
    let timeout = 0;
    let fetch: ReturnType<typeof runFetch> | undefined;
    let signal: AbortSignal | undefined;
    try {
      const c = parseConnectivity('curl', req.agent.connectivity_details);
      timeout = c.timeout_seconds;
      signal = runSignal(req.signal, c.timeout_seconds);
      fetch = runFetch(this.deps.fetch, await remoteHeaders(c, req.task, this.deps.secrets), signal);
      const { url, init } = buildRequest(c, prompt, invocationContext(req));
      const f = fetch;
      const answer = await traced(req, clock, { name: `curl ${c.method}`, payload: { url: redactedUrl(url), method: c.method } }, async () => {
        const res = await f(url, init);
        const text = await readBounded(res);
        if (res.status < 200 || res.status >= 300) {
          throw Object.assign(new RemoteAgentError(`The curl agent answered HTTP ${res.status}${res.status === 401 || res.status === 403 ? ' (authentication failed: check connectivity_details auth_type and api_key)' : ''}: ${text.slice(0, 300)}`), { status: res.status });
        }
        const body = readAnswer(c, text, res.headers.get('content-type'));
        // The trace keeps a preview; the task result has the whole answer.
        return { status: res.status, result: body.slice(0, 2000), answer: body };
      });
      const problem = await outputProblem(req, answer.answer, this.deps.schemaChecker);
      return outcome(req, clock, problem ? 'failed' : 'completed', problem ?? answer.answer, prompt);
    } catch (e) {
      if (req.signal.aborted) throw aborted(req, clock, prompt);
      if (e instanceof ConnectivityError) return outcome(req, clock, 'error', e.message, prompt);
      return outcome(req, clock, 'error', describeFailure(e, 'curl', timeout, fetch?.lastStatus, signal?.aborted === true), prompt);
    }
  }
}

/**
 * The invocation's context (remote-call.ts invocationContext) goes at `context_path` as an object (GET: a query
 * parameter holding its JSON); without a context_path its task instructions follow the prompt as labelled text
 * sections (contextText), so they reach the agent either way; the user then is not sent.
 */
function buildRequest(c: CurlConnectivity, userPrompt: string, ctx: Record<string, unknown>): { url: string; init: RequestInit } {
  const hasContext = Object.keys(ctx).length > 0;
  const sections = c.context_path ? '' : contextText(ctx);
  const prompt = sections ? `${userPrompt}\n\n${sections}` : userPrompt;
  if (c.method === 'GET') {
    const u = new URL(c.url);
    u.searchParams.set(c.prompt_path, prompt);
    if (hasContext && c.context_path) u.searchParams.set(c.context_path, JSON.stringify(ctx));
    return { url: u.href, init: { method: 'GET', headers: { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' } } };
  }
  const body = structuredClone(c.body);
  setPath(body, c.prompt_path, prompt);
  if (hasContext && c.context_path) setPath(body, c.context_path, ctx);
  return {
    url: c.url,
    init: { method: c.method, headers: { 'content-type': 'application/json', accept: 'application/json, text/plain;q=0.9, */*;q=0.5' }, body: JSON.stringify(body) },
  };
}

/** Sets `value` at a dot path, creating objects on the way (numeric segments of existing arrays index them). */
function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const segs = path.replace(/\[(\d+)\]/g, '.$1').split('.').filter(Boolean);
  let cur: Record<string, unknown> | unknown[] = root;
  for (const [i, seg] of segs.entries()) {
    if (seg === '__proto__' || seg === 'constructor' || seg === 'prototype') throw new RemoteAgentError(`connectivity_details.prompt_path cannot use '${seg}'`);
    const last = i === segs.length - 1;
    const holder = cur as Record<string, unknown>;
    if (last) {
      holder[seg] = value;
      return;
    }
    const next = holder[seg];
    if (next === null || typeof next !== 'object') holder[seg] = {};
    cur = holder[seg] as Record<string, unknown>;
  }
}

function readAnswer(c: CurlConnectivity, text: string, contentType: string | null): string {
  if (!c.response_path) {
    // A JSON string answer ("hello") is the string; any other body is the result as sent.
    if (/json/i.test(contentType ?? '')) {
      try {
        const v = JSON.parse(text);
        if (typeof v === 'string') return v;
      } catch {
        // not JSON after all: the text as it came
      }
    }
    return text;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RemoteAgentError(`The curl agent's answer is not JSON, so connectivity_details.response_path '${c.response_path}' cannot be read: ${text.slice(0, 200)}`);
  }
  const v = readPath(parsed, c.response_path);
  if (v === undefined) throw new RemoteAgentError(`The curl agent's answer has nothing at connectivity_details.response_path '${c.response_path}'`);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The trace shows where a call went, not a key someone put in a query string. */
function redactedUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}
