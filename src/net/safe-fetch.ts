import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { setBounded } from '../lib/bounded-map.js';
import { EgressAllowList, isNonPublicAddress } from './ip-ranges.js';

/**
 * The egress policy (docs/contract.md#egress), and the one fetch every outbound call made for a user goes through
 * (connector invoke, MCP, llm_api_base, knowledge-base URLs, A2A).
 *
 * The address check happens inside the socket's DNS lookup, so the address that is checked is the address that
 * is connected to (no window for DNS rebinding), and it runs again on every redirect hop.
 */

export interface EgressPolicy {
  readonly allow: EgressAllowList;
}

export function createEgressPolicy(allowEntries: readonly string[]): EgressPolicy {
  return { allow: new EgressAllowList(allowEntries) };
}

/** A refused outbound call. Its message is safe to show to users and LLMs. */
export class EgressRefusedError extends Error {
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(`Outbound request to ${redactForMessage(url)} refused: ${reason}`);
    this.name = 'EgressRefusedError';
  }
}

export function isEgressRefused(e: unknown): e is EgressRefusedError {
  return e instanceof EgressRefusedError || (e instanceof Error && e.cause instanceof EgressRefusedError);
}

function redactForMessage(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'an invalid URL';
  }
}

function addressRefusal(policy: EgressPolicy, hostname: string, address: string): string | undefined {
  if (!isNonPublicAddress(address)) return undefined;
  if (policy.allow.allowsHost(hostname) || policy.allow.allowsAddress(address)) return undefined;
  return `${address} is a private, loopback or link-local address (allow it with AGENTRY_EGRESS_ALLOW)`;
}

/**
 * The refusal of an IP literal host (undefined: allowed), by hostname as the URL gives it. The answer depends only on
 * the policy, which does not change, and an agent's model endpoint is asked about on every call: Node's BlockList
 * check builds SocketAddress objects, ~1% of a synchronous run's CPU. Bounded: hostnames come from configuration.
 */
const literalRefusals = new WeakMap<EgressPolicy, Map<string, string | undefined>>();
const LITERAL_REFUSALS_MAX = 1000;

function literalRefusal(policy: EgressPolicy, hostname: string): string | undefined {
  let known = literalRefusals.get(policy);
  if (!known) literalRefusals.set(policy, (known = new Map()));
  if (known.has(hostname)) return known.get(hostname);
  const host = hostname.replace(/^\[|\]$/g, '');
  const reason = isIP(host) ? addressRefusal(policy, host, host) : undefined;
  setBounded(known, hostname, reason, LITERAL_REFUSALS_MAX);
  return reason;
}

function checkUrlShape(policy: EgressPolicy, url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EgressRefusedError(url.href, `only http and https are allowed, not ${url.protocol.replace(':', '')}`);
  }
  const reason = literalRefusal(policy, url.hostname);
  if (reason) throw new EgressRefusedError(url.href, reason);
}

/**
 * Checks a URL before use (for example when a user configures it): scheme, then every address its host resolves
 * to. The fetch below checks again at connect time, so passing this is not a licence to skip it.
 */
export async function assertAllowed(policy: EgressPolicy, target: string | URL): Promise<void> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new EgressRefusedError(String(target), 'not a valid URL');
  }
  checkUrlShape(policy, url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return;
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  ).catch((err: NodeJS.ErrnoException) => {
    throw new EgressRefusedError(url.href, `host ${host} could not be resolved (${err.code ?? 'DNS error'})`);
  });
  for (const a of addresses) {
    const reason = addressRefusal(policy, host, a.address);
    if (reason) throw new EgressRefusedError(url.href, reason);
  }
}

/**
 * For clients that open their own sockets (SMTP): the one address of `host` to connect to, after the same checks
 * as a fetch (every resolved address allowed). Connecting to the returned address leaves no window for rebinding.
 */
export async function resolveAllowedHost(policy: EgressPolicy, host: string, label: string): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses: LookupAddress[] = isIP(bare)
    ? [{ address: bare, family: isIP(bare) }]
    : await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(bare, { all: true }, (err, a) => (err ? reject(err) : resolve(a)))).catch(
        (err: NodeJS.ErrnoException) => {
          throw new EgressRefusedError(label, `host ${bare} could not be resolved (${err.code ?? 'DNS error'})`);
        },
      );
  for (const a of addresses) {
    const reason = addressRefusal(policy, bare, a.address);
    if (reason) throw new EgressRefusedError(label, reason);
  }
  return addresses[0]!.address;
}

/** A DNS lookup for sockets that refuses the connection when any resolved address is not allowed. */
function guardedLookup(policy: EgressPolicy, url: string): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addrs) => {
      if (err) return callback(err, '', 0);
      const list = addrs as LookupAddress[];
      for (const a of list) {
        const reason = addressRefusal(policy, hostname, a.address);
        if (reason) return callback(new EgressRefusedError(url, reason), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}

export type SafeFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A request option of this fetch (`{ ...init, [NODE_BODY]: true }`): a successful (2xx) answer's body is handed over
 * as the Node stream it arrives on (`nodeBodyOf(response)`), and the Response itself has no body. Bridging it to a
 * web stream (`Readable.toWeb`, then whatever the reader builds on it) cost ~5% of a short synchronous run's CPU,
 * paid on every LLM call for a reader that only wants the bytes (llm/chat-completions-stream.ts). Other answers,
 * and every other fetch (undici's ignores the option), come as usual, so a reader must accept both.
 */
export const NODE_BODY: unique symbol = Symbol('agentry.safeFetch.nodeBody');
const nodeBodies = new WeakMap<Response, Readable>();

/** The body of a response fetched with `NODE_BODY`, decoded (gzip, deflate, br); undefined for any other response. */
export function nodeBodyOf(response: Response): Readable | undefined {
  return nodeBodies.get(response);
}

export interface SafeFetchOptions {
  /** Redirect hops followed before giving up (each hop is checked). Default 5. */
  maxRedirects?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A fetch-compatible function (usable as the `fetch` option of the MCP SDK and the AI SDK providers). */
export function createSafeFetch(policy: EgressPolicy, opts: SafeFetchOptions = {}): SafeFetch {
  const maxRedirects = opts.maxRedirects ?? 5;
  return async (input, init) => {
    const first = await requestParts(input, init);
    const signal = first.signal;
    let method = first.method;
    const headers = first.headers;
    if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'gzip, deflate, br');
    let body = method === 'GET' || method === 'HEAD' ? undefined : first.body;
    const redirectMode = first.redirect;
    let url = first.url;
    for (let hop = 0; ; hop++) {
      checkUrlShape(policy, url);
      signal?.throwIfAborted();
      const res = await send(policy, url, method, headers, body, signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECTS.has(status) && location && redirectMode !== 'manual') {
        res.resume();
        if (redirectMode === 'error') throw new TypeError('fetch failed: redirect not allowed');
        if (hop >= maxRedirects) throw new TypeError(`fetch failed: more than ${maxRedirects} redirects`);
        const next = new URL(location, url);
        if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
          method = method === 'HEAD' ? 'HEAD' : 'GET';
          body = undefined;
          for (const h of ['content-type', 'content-length', 'content-encoding']) headers.delete(h);
        }
        // Credentials were meant for the first origin only.
        if (next.origin !== url.origin) for (const h of ['authorization', 'cookie', 'proxy-authorization']) headers.delete(h);
        url = next;
        continue;
      }
      return toResponse(res, url, hop > 0, method, signal, (init as { [NODE_BODY]?: boolean } | undefined)?.[NODE_BODY] === true);
    }
  };
}

interface RequestParts {
  url: URL;
  method: string;
  headers: Headers;
  body: Buffer | undefined;
  signal: AbortSignal | null | undefined;
  redirect: RequestRedirect;
}

/**
 * The request as fetch would read it. The common call (a URL string and a string body, as the LLM and MCP SDKs
 * make it) is read directly: building a `Request` and reading its body back through a web stream cost ~0.2 ms of
 * CPU per LLM call. Anything else goes through `Request`, which knows every form fetch accepts.
 */
async function requestParts(input: string | URL | Request, init: RequestInit | undefined): Promise<RequestParts> {
  if ((typeof input === 'string' || input instanceof URL) && (init?.body === undefined || init.body === null || typeof init.body === 'string')) {
    const headers = new Headers(init?.headers);
    const text = init?.body ?? undefined;
    // As fetch labels a string body it is not told the type of.
    if (text !== undefined && !headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
    const method = (init?.method ?? 'GET').toUpperCase();
    if ((method === 'GET' || method === 'HEAD') && text !== undefined) throw new TypeError('Request with GET/HEAD method cannot have body.');
    // No body is an empty one, as Request reads it back (sent with content-length 0, not chunked).
    return { url: new URL(input), method, headers, body: Buffer.from(text ?? ''), signal: init?.signal, redirect: init?.redirect ?? 'follow' };
  }
  const request = new Request(input, init);
  return {
    url: new URL(request.url),
    method: request.method.toUpperCase(),
    headers: new Headers(request.headers),
    body: Buffer.from(await request.arrayBuffer()),
    signal: init?.signal ?? request.signal,
    redirect: init?.redirect ?? request.redirect,
  };
}

function send(
  policy: EgressPolicy,
  url: URL,
  method: string,
  headers: Headers,
  body: Buffer | undefined,
  signal: AbortSignal | null | undefined,
): Promise<IncomingMessage> {
  const outgoing: Record<string, string> = {};
  headers.forEach((v, k) => (outgoing[k] = v));
  if (body) outgoing['content-length'] = String(body.length);
  const options: RequestOptions = { method, headers: outgoing, lookup: guardedLookup(policy, url.href) };
  const doRequest = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    // The abort listener lives only while the request waits for its response head; the body has its own.
    const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    const req = doRequest(url, options, (res) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(res);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err: Error) => {
      signal?.removeEventListener('abort', onAbort);
      if (err instanceof EgressRefusedError) return reject(err);
      if (signal?.aborted) return reject(signal.reason ?? err);
      reject(new TypeError('fetch failed', { cause: err }));
    });
    req.end(body);
  });
}

function toResponse(res: IncomingMessage, url: URL, redirected: boolean, method: string, signal: AbortSignal | null | undefined, nodeBody: boolean): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) headers.append(k, item);
    else headers.set(k, v);
  }
  const nullBody = method === 'HEAD' || status === 204 || status === 205 || status === 304;
  let stream: Readable = res;
  const encoding = (res.headers['content-encoding'] ?? '').toLowerCase().trim();
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : undefined;
  if (decoder && !nullBody) {
    stream = res.pipe(decoder);
    res.on('error', (e) => decoder.destroy(e));
    headers.delete('content-encoding');
    headers.delete('content-length');
  }
  if (signal && !nullBody) {
    const onAbort = () => {
      if (!stream.destroyed && !stream.readableEnded) stream.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    stream.once('close', () => signal.removeEventListener('abort', onAbort));
  }
  const handOver = nodeBody && !nullBody && status >= 200 && status <= 299;
  const response = new Response(nullBody || handOver ? null : (Readable.toWeb(stream) as ReadableStream<Uint8Array>), {
    status,
    statusText: res.statusMessage,
    headers,
  });
  if (handOver) nodeBodies.set(response, stream);
  if (nullBody) res.resume();
  Object.defineProperty(response, 'url', { value: url.href });
  Object.defineProperty(response, 'redirected', { value: redirected });
  return response;
}
