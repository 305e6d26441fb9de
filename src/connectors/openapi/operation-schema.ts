import type { CatalogOperation } from './catalog.js';
import type { JsonObject } from './document.js';
import { SchemaInliner } from './inliner.js';
import { derefObject, type RefResolver } from './refs.js';

/**
 * The schema of one operation (spec 2.6, docs/contract.md#operation-schema) and the request plan that invoking it
 * follows.
 */

export type ParameterLocation = 'query' | 'path' | 'header' | 'cookie';

export const PART_OF: Record<ParameterLocation, string> = {
  query: 'query_params',
  path: 'path_params',
  header: 'headers',
  cookie: 'cookies',
};

/** How one parameter is serialised on the wire (OpenAPI `style`/`explode`). */
export interface PlannedParameter {
  name: string;
  in: ParameterLocation;
  style?: string;
  explode?: boolean;
}

export interface RequestPlan {
  parameters: PlannedParameter[];
  /** The media type the body is sent as; null when the operation takes no body. */
  bodyMediaType: string | null;
}

export interface OperationSchema {
  id: string;
  operationId: string;
  path: string;
  method: string;
  input: JsonObject;
  output: JsonObject;
}

export interface BuiltOperation {
  schema: OperationSchema;
  plan: RequestPlan;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  deprecated?: boolean;
  example?: unknown;
  schema?: unknown;
  content?: Record<string, { schema?: unknown }>;
  style?: string;
  explode?: boolean;
}

const LOCATIONS = new Set<string>(['query', 'path', 'header', 'cookie']);

export function buildOperationSchema(doc: JsonObject, resolver: RefResolver, op: CatalogOperation, budget: number): BuiltOperation {
  const pathItem = derefObject(resolver, (doc.paths as JsonObject)[op.path]) ?? {};
  const operation = (pathItem[op.method] ?? {}) as JsonObject;
  const parameters = mergedParameters(resolver, pathItem.parameters, operation.parameters);

  const input = new SchemaInliner(resolver, budget);
  const parts: Record<string, { properties: JsonObject; required: string[] }> = {};
  const plan: RequestPlan = { parameters: [], bodyMediaType: null };
  // A referenced schema is filled in by finish(): the parameter's own fields are laid over it afterwards.
  const overlays: (() => void)[] = [];
  for (const p of parameters) {
    const part = (parts[PART_OF[p.in as ParameterLocation]] ??= { properties: {}, required: [] });
    const schema = (part.properties[p.name] = parameterSchema(input, p));
    overlays.push(() => overlayParameter(schema, p));
    if (p.required || p.in === 'path') part.required.push(p.name);
    plan.parameters.push({ name: p.name, in: p.in as ParameterLocation, style: p.style, explode: p.explode });
  }

  let body: unknown = { type: 'object', properties: {} };
  let bodyRequired = false;
  const requestBody = derefObject(resolver, operation.requestBody) ?? bodyFromParameters(resolver, pathItem.parameters, operation.parameters);
  const media = requestBody ? pickRequestMedia(requestBody.content as Record<string, JsonObject> | undefined) : undefined;
  if (requestBody && media) {
    plan.bodyMediaType = media.type;
    bodyRequired = requestBody.required === true;
    const added = (body = media.schema === undefined ? {} : input.add(media.schema, 0));
    overlays.push(() => {
      if (typeof requestBody.description === 'string' && added && typeof added === 'object' && !('description' in added)) {
        (added as JsonObject).description = requestBody.description;
      }
    });
  }
  input.finish();
  for (const apply of overlays) apply();

  const properties: JsonObject = {};
  const required: string[] = [];
  for (const name of ['query_params', 'path_params']) {
    const part = parts[name] ?? { properties: {}, required: [] };
    properties[name] = objectPart(part);
    if (part.required.length) required.push(name);
  }
  properties.body_params = body;
  if (bodyRequired) required.push('body_params');
  for (const name of ['headers', 'cookies']) {
    const part = parts[name];
    if (!part) continue;
    properties[name] = objectPart(part);
    if (part.required.length) required.push(name);
  }

  return {
    schema: {
      id: op.id,
      operationId: op.operationId,
      path: op.path,
      method: op.method,
      input: { type: 'object', properties, required },
      output: outputSchema(resolver, operation.responses, budget),
    },
    plan,
  };
}

function objectPart(part: { properties: JsonObject; required: string[] }): JsonObject {
  return { type: 'object', properties: part.properties, ...(part.required.length ? { required: part.required } : {}) };
}

/** Path-item parameters first, then the operation's; the operation wins on a name+location clash. */
function mergedParameters(resolver: RefResolver, pathLevel: unknown, opLevel: unknown): Parameter[] {
  const byKey = new Map<string, Parameter>();
  for (const list of [pathLevel, opLevel]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const p = derefObject<Parameter>(resolver, raw);
      if (!p || typeof p.name !== 'string' || !LOCATIONS.has(p.in)) continue;
      byKey.set(`${p.in}\u0000${p.name}`, p);
    }
  }
  return [...byKey.values()];
}

/**
 * The Swagger 2.0 upgrader moves a *referenced* `in: body` parameter to components/requestBodies but leaves the
 * reference among the parameters (Kubernetes' DeleteOptions bodies): such an entry is the operation's body.
 */
function bodyFromParameters(resolver: RefResolver, pathLevel: unknown, opLevel: unknown): JsonObject | undefined {
  let found: JsonObject | undefined;
  for (const list of [pathLevel, opLevel]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const ref = raw && typeof raw === 'object' ? (raw as JsonObject).$ref : undefined;
      if (typeof ref !== 'string' || !ref.startsWith('#/components/requestBodies/')) continue;
      const body = derefObject(resolver, raw);
      if (body?.content) found = body;
      else if (body && 'schema' in body) found = { required: body.required, content: { 'application/json': { schema: body.schema } } };
    }
  }
  return found;
}

function parameterSchema(inliner: SchemaInliner, p: Parameter): unknown {
  let schema = p.schema;
  if (schema === undefined && p.content && typeof p.content === 'object') schema = Object.values(p.content)[0]?.schema;
  return schema === undefined ? { type: 'string' } : inliner.add(schema, 1);
}

/** Parameter schemas keep the parameter's description, example and deprecation (docs/contract.md#operation-schema). */
function overlayParameter(out: unknown, p: Parameter): void {
  if (!out || typeof out !== 'object') return;
  const o = out as JsonObject;
  if (typeof p.description === 'string' && p.description) o.description = p.description;
  if (p.example !== undefined) o.example = p.example;
  if (p.deprecated === true) o.deprecated = true;
}

const baseType = (mediaType: string) => mediaType.split(';')[0].trim().toLowerCase();
const isJsonMedia = (mediaType: string) => {
  const t = baseType(mediaType);
  return t === 'application/json' || t.endsWith('+json');
};

/** JSON first, then any +json, form, multipart, then whatever is listed first (docs/contract.md#operation-schema). */
function pickRequestMedia(content: Record<string, JsonObject> | undefined): { type: string; schema: unknown } | undefined {
  if (!content || typeof content !== 'object') return undefined;
  const types = Object.keys(content);
  if (!types.length) return undefined;
  const chosen =
    types.find((t) => baseType(t) === 'application/json') ??
    types.find((t) => baseType(t).endsWith('+json')) ??
    types.find((t) => baseType(t) === 'application/x-www-form-urlencoded') ??
    types.find((t) => baseType(t) === 'multipart/form-data') ??
    types[0];
  return { type: chosen, schema: content[chosen]?.schema };
}

/** The lowest 2xx response with a JSON media type (exact codes before `2XX`); `{}` when there is none. */
function outputSchema(resolver: RefResolver, responses: unknown, budget: number): JsonObject {
  if (!responses || typeof responses !== 'object') return {};
  const codes = Object.keys(responses as JsonObject)
    .filter((c) => /^2(\d\d|XX)$/i.test(c))
    .sort((a, b) => rank(a) - rank(b));
  for (const code of codes) {
    const response = derefObject(resolver, (responses as JsonObject)[code]);
    const content = response?.content as Record<string, JsonObject> | undefined;
    if (!content || typeof content !== 'object') continue;
    const types = Object.keys(content).filter(isJsonMedia);
    const chosen = types.find((t) => baseType(t) === 'application/json') ?? types[0];
    if (!chosen) continue;
    const schema = content[chosen]?.schema;
    if (schema === undefined) return {};
    const inliner = new SchemaInliner(resolver, budget);
    const out = inliner.add(schema, 0);
    inliner.finish();
    return typeof out === 'boolean' ? (out ? {} : { not: {} }) : (out as JsonObject);
  }
  return {};
}

const rank = (code: string) => (/^2XX$/i.test(code) ? 300 : Number(code));
