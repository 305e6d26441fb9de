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
  for (const [k, v] of Object.entries(defaults.headers ?? {})) headers.set(k, v);
  for (const [k, v] of Object.entries(payload.headers ?? {})) {
    if (v !== undefined && v !== null) headers.set(k, Array.isArray(v) ? v.map(text).join(',') : text(v));
  }
  const cookies = Object.entries(payload.cookies ?? {}).filter(([, v]) => v !== undefined && v !== null);
  if (cookies.length) headers.set('cookie', cookies.map(([k, v]) => `${k}=${encodeURIComponent(text(v))}`).join('; '));
  if (!headers.has('accept')) headers.set('accept', 'application/json, */*;q=0.8');

  const out: OutgoingRequest = { url, method: method.toUpperCase(), headers };
  const body = payload.body_params;
  const hasBody = body !== undefined && body !== null && !(isPlainObject(body) && Object.keys(body).length === 0 && !plan.bodyMediaType);
  if (hasBody && plan.bodyMediaType !== null) encodeBody(out, plan.bodyMediaType, body);
  else if (hasBody) encodeBody(out, 'application/json', body);
  return out;
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
