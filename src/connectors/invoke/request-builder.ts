import { AppError } from '../../errors.js';
import type { PlannedParameter, RequestPlan } from '../openapi/operation-schema.js';

/**
 * Builds the HTTP request of an operation from an invoke payload: path template filled, query string and headers
 * serialised per the parameters' `style`/`explode` (OpenAPI defaults: form+explode for query, simple for path and
 * headers), and the body encoded in the operation's media type.
 */

export interface InvokePayload {
  query_params?: Record<string, unknown> | null;
  path_params?: Record<string, unknown> | null;
  body_params?: unknown;
  headers?: Record<string, unknown> | null;
  cookies?: Record<string, unknown> | null;
}

export interface OutgoingRequest {
  url: URL;
  method: string;
  headers: Headers;
  body?: string | URLSearchParams | FormData;
}

const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

export function buildRequest(
  baseUrl: string,
  path: string,
  method: string,
  plan: RequestPlan,
  payload: InvokePayload,
  defaults: { headers?: Record<string, string>; query?: Record<string, unknown> },
): OutgoingRequest {
  const declared = new Map(plan.parameters.map((p) => [`${p.in}\u0000${p.name}`, p]));
  const param = (loc: PlannedParameter['in'], name: string): PlannedParameter => declared.get(`${loc}\u0000${name}`) ?? { name, in: loc };

  const pathParams = payload.path_params ?? {};
  const filled = path.replace(/\{([^}]+)\}/g, (m, name: string) =>
    name in pathParams ? serialisePathValue(param('path', name), pathParams[name]) : m,
  );
  const url = new URL(baseUrl.replace(/\/+$/, '') + (filled.startsWith('/') ? filled : `/${filled}`));

  const query = { ...(defaults.query ?? {}), ...(payload.query_params ?? {}) };
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    appendQuery(url.searchParams, param('query', name), value);
  }

  const headers = new Headers();
  for (const [k, v] of Object.entries(defaults.headers ?? {})) setHeader(headers, k, v, CONNECTION_LOC);
  for (const [k, v] of Object.entries(payload.headers ?? {})) {
    if (v !== undefined && v !== null) setHeader(headers, k, Array.isArray(v) ? v.map(text).join(',') : text(v), ['body', 'headers', k]);
  }
  const cookies = Object.entries(payload.cookies ?? {}).filter(([, v]) => v !== undefined && v !== null);
  for (const [k] of cookies) if (!HEADER_NAME.test(k)) throw AppError.invalid(['body', 'cookies', k], 'Invalid cookie name');
  if (cookies.length) headers.set('cookie', cookies.map(([k, v]) => `${k}=${encodeURIComponent(text(v))}`).join('; '));
  if (!headers.has('accept')) headers.set('accept', 'application/json, */*;q=0.8');

  const out: OutgoingRequest = { url, method: method.toUpperCase(), headers };
  const body = payload.body_params;
  const hasBody = body !== undefined && body !== null && !(isPlainObject(body) && Object.keys(body).length === 0 && !plan.bodyMediaType);
  if (hasBody && plan.bodyMediaType !== null) encodeBody(out, plan.bodyMediaType, body);
  else if (hasBody) encodeBody(out, 'application/json', body);
  return out;
}

/** RFC 9110 token, and a field value without CR, LF, NUL or characters outside Latin-1 (what fetch can send). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Where a connection's own header is reported: the caller chose the connection, not its headers. */
export const CONNECTION_LOC: (string | number)[] = ['path', 'connection_id'];

/**
 * A header the caller (or the connection) gave that fetch would refuse is the caller's mistake: 422 naming it,
 * never the value (it may be a credential). fetch's own TypeError answered 502 as if the upstream had failed
 * (issue 20).
 */
export function setHeader(headers: Headers, name: string, value: string, loc: (string | number)[]): void {
  const where = loc === CONNECTION_LOC ? ` (header '${name}' of the connection)` : '';
  if (!HEADER_NAME.test(name)) throw AppError.invalid(loc, `Invalid header name${where}`);
  if (!HEADER_VALUE.test(value)) throw AppError.invalid(loc, `Invalid header value: control characters or characters outside Latin-1${where}`);
  headers.set(name, value);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

function serialisePathValue(p: PlannedParameter, value: unknown): string {
  const style = p.style ?? 'simple';
  const explode = p.explode ?? false;
  const enc = (v: unknown) => encodeURIComponent(text(v));
  const prefix = style === 'label' ? '.' : style === 'matrix' ? `;${p.name}=` : '';
  if (Array.isArray(value)) {
    const sep = style === 'label' ? (explode ? '.' : ',') : style === 'matrix' && explode ? `;${p.name}=` : ',';
    return prefix + value.map(enc).join(sep);
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    const pairs = explode ? entries.map(([k, v]) => `${encodeURIComponent(k)}=${enc(v)}`) : entries.flatMap(([k, v]) => [encodeURIComponent(k), enc(v)]);
    return prefix + pairs.join(style === 'label' && explode ? '.' : style === 'matrix' && explode ? ';' : ',');
  }
  return prefix + enc(value);
}

function appendQuery(params: URLSearchParams, p: PlannedParameter, value: unknown): void {
  const style = p.style ?? 'form';
  const explode = p.explode ?? style === 'form';
  if (Array.isArray(value)) {
    if (style === 'form' && explode) for (const v of value) params.append(p.name, text(v));
    else params.append(p.name, value.map(text).join(style === 'spaceDelimited' ? ' ' : style === 'pipeDelimited' ? '|' : ','));
    return;
  }
  if (isPlainObject(value)) {
    if (style === 'deepObject') for (const [k, v] of Object.entries(value)) params.append(`${p.name}[${k}]`, text(v));
    else if (explode) for (const [k, v] of Object.entries(value)) params.append(k, text(v));
    else params.append(p.name, Object.entries(value).flatMap(([k, v]) => [k, text(v)]).join(','));
    return;
  }
  params.append(p.name, text(value));
}

function encodeBody(out: OutgoingRequest, mediaType: string, body: unknown): void {
  const base = mediaType.split(';')[0].trim().toLowerCase();
  if (base === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams();
    if (isPlainObject(body)) {
      for (const [k, v] of Object.entries(body)) {
        if (v === undefined) continue;
        if (Array.isArray(v)) for (const item of v) form.append(k, text(item));
        else form.append(k, text(v));
      }
    }
    out.body = form;
    out.headers.set('content-type', 'application/x-www-form-urlencoded');
    return;
  }
  if (base === 'multipart/form-data') {
    const form = new FormData();
    if (isPlainObject(body)) {
      for (const [k, v] of Object.entries(body)) {
        if (v === undefined) continue;
        if (Array.isArray(v)) for (const item of v) form.append(k, text(item));
        else form.append(k, text(v));
      }
    }
    out.body = form; // fetch sets the content type with its boundary
    return;
  }
  if (base === 'application/json' || base.endsWith('+json')) {
    out.body = JSON.stringify(body);
    out.headers.set('content-type', mediaType);
    return;
  }
  // text/plain, application/octet-stream, XML...: a string is sent as it is, anything else as JSON text.
  out.body = typeof body === 'string' ? body : JSON.stringify(body);
  out.headers.set('content-type', mediaType);
}
