import { callDepthOf } from '../tasks/call-depth.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { Container } from '../container.js';
import { AppError } from '../errors.js';
import { userTokenOf } from '../auth/pre-auth-token.js';
import type { IncomingFile } from '../files/files.service.js';
import type { WebhookForm } from '../webhooks/webhook-params.js';
import type { PublicBinding, WebhookAnswer } from '../webhooks/webhook-receiver.service.js';
import type { Principal } from '../auth/principal.js';

/**
 * The webhook call as both transports carry it: the Fastify routes (forms, multipart, anything unusual) and the
 * fast lane (plain JSON, the common case). Everything here is shared so the two differ only in how the request
 * is read and the answer written.
 */
export interface WebhookRequest {
  form: WebhookForm;
  /** Public form: the secret from the path. */
  secret?: string;
  /** Public form: the secret resolved before the body was read. */
  bound?: PublicBinding;
  /** Key form: the key as precheckKey found it before the body was read. */
  caller?: Principal;
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  files: IncomingFile[];
}

/**
 * Key form, before the body is read: a caller without a valid key is refused (401/403) whatever it sent. The caller
 * it found goes with the call (`caller`), so the key is not hashed and looked up a second time.
 */
export function precheckKey(c: Container, headers: IncomingHttpHeaders, query: Record<string, unknown>): Promise<Principal | undefined> {
  return c.webhooks.precheckKey(query, apiKeyOf(headers, query));
}

/** The 200 answer: its JSON text, and `x-task-id` on an asynchronous one (its body stays `{"status":"Started"}`). */
export interface WebhookReply {
  text: string;
  headers: Record<string, string>;
}

/** Runs one call. (Not an async function: the call's own promise, one frame fewer on every accepted call.) */
export function runWebhook(c: Container, r: WebhookRequest): Promise<WebhookReply> {
  try {
    return invoke(c, r).then(reply);
  } catch (e) {
    // A header refused while reading it (user token, call depth) is a rejection, as from an async function.
    return Promise.reject(e);
  }
}

function invoke(c: Container, r: WebhookRequest): Promise<WebhookAnswer> {
  return c.webhooks.invoke({
    form: r.form,
    secret: r.form === 'public' ? r.secret : undefined,
    bound: r.bound,
    apiKey: r.form === 'key' ? apiKeyOf(r.headers, r.query) : undefined,
    caller: r.form === 'key' ? r.caller : undefined,
    // Neither form authenticates with Authorization, so it may carry the end user's token (OIDC pre-auth).
    userToken: userTokenOf(r.headers, true),
    callDepth: callDepthOf(r.headers),
    query: r.query,
    body: r.body,
    files: r.files,
  });
}

function reply(answer: WebhookAnswer): WebhookReply {
  if (answer.kind === 'started') return { text: STARTED, headers: { 'x-task-id': answer.taskId } };
  // Serialised here: a bare string (a getter value) must go out as JSON, not as text/plain.
  return { text: JSON.stringify(answer.value ?? null), headers: {} };
}

const STARTED = JSON.stringify({ status: 'Started' });

function apiKeyOf(headers: IncomingHttpHeaders, query: Record<string, unknown>): string | undefined {
  const h = headers['x-api-key'];
  const fromHeader = Array.isArray(h) ? h[0] : h;
  const q = query['x-api-key'];
  const fromQuery = Array.isArray(q) ? q[0] : q;
  const key = fromHeader?.trim() || (typeof fromQuery === 'string' ? fromQuery.trim() : '');
  return key || undefined;
}

/**
 * A JSON or form body as an object; no body is an empty one. In a form a repeated name counts once (its first
 * value), as in the query string and in multipart bodies.
 */
export function objectBody(body: unknown, isForm: boolean): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw AppError.validation([{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }]);
  }
  // A parsed JSON object is the request's own (no `__proto__` key: the parser refuses it): used as it is.
  if (!isForm) return body as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) out[k] = Array.isArray(v) ? v[0] : v;
  return out;
}
