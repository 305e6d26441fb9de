import { normalize, upgradeFromTwoToThree, validate } from '@scalar/openapi-parser';
import { AppError } from '../../errors.js';

/**
 * Loading an imported document: parse (JSON or YAML), validate, and upgrade Swagger 2.0 to OpenAPI 3.0 so the
 * rest of the connector code reads one shape (requestBody, content maps, components).
 *
 * 3.0 documents are not upgraded to 3.1: the upgrader rewrites `example` keys anywhere in a schema, including
 * properties that are *named* "example" (Kubernetes' JSONSchemaProps), which corrupts them. The inliner
 * understands the 3.0 keywords (`nullable`) itself.
 */

export type JsonObject = Record<string, unknown>;

export interface LoadedDocument {
  /** The document as OpenAPI 3.x (Swagger 2.0 upgraded to 3.0). */
  document: JsonObject;
  /** The version the publisher wrote: "2.0", "3.0.3", "3.1.0", ... */
  sourceVersion: string;
  title: string;
  apiVersion: string;
  /** The first server URL with its variables' defaults substituted; may be relative ("/api/v3"). */
  serverUrl: string | null;
}

/**
 * Reference problems are not fatal: real documents point at examples on the web or use `$ref` as a property
 * name; such a reference is left unexpanded by the inliner. Structural errors are.
 */
const TOLERATED = /can't resolve|could not resolve|external reference/i;

export async function loadOpenApiDocument(input: unknown, loc: (string | number)[] = ['body', 'openapi']): Promise<LoadedDocument> {
  let raw: unknown;
  try {
    if (typeof input === 'string') {
      if (!input.trim()) throw new Error('the document is empty');
      raw = normalize(input);
    } else if (input && typeof input === 'object' && !Array.isArray(input)) {
      // The upgrader rewrites objects in place: work on a copy of what the caller gave us.
      raw = structuredClone(input);
    } else throw new Error('expected an OpenAPI document (object, JSON or YAML)');
  } catch (e) {
    throw AppError.invalid(loc, `Invalid OpenAPI document: ${firstLine((e as Error).message)}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw AppError.invalid(loc, 'Invalid OpenAPI document: not an object');
  const obj = raw as JsonObject;
  const sourceVersion = typeof obj.openapi === 'string' ? obj.openapi : typeof obj.swagger === 'string' ? obj.swagger : undefined;
  if (!sourceVersion || !/^(2\.0|3\.[01])(\.\d+)?$/.test(sourceVersion)) {
    throw AppError.invalid(loc, 'Invalid OpenAPI document: expected OpenAPI 3.0, 3.1 or Swagger 2.0 (an "openapi" or "swagger" version field)');
  }
  const result = await validate(obj);
  const fatal = (result.errors ?? []).filter((e) => !TOLERATED.test(e.message));
  if (fatal.length) {
    const where = fatal[0].path ? ` at ${fatal[0].path}` : '';
    throw AppError.invalid(loc, `Invalid OpenAPI document: ${fatal[0].message}${where}`);
  }
  let document: JsonObject;
  try {
    document = sourceVersion.startsWith('2') ? (upgradeFromTwoToThree(obj as never) as unknown as JsonObject) : obj;
  } catch (e) {
    throw AppError.invalid(loc, `Invalid OpenAPI document: ${firstLine((e as Error).message)}`);
  }
  const info = (document.info ?? {}) as JsonObject;
  return {
    document,
    sourceVersion,
    title: typeof info.title === 'string' ? info.title : '',
    apiVersion: typeof info.version === 'string' ? info.version : String(info.version ?? ''),
    serverUrl: firstServerUrl(document),
  };
}

function firstLine(s: string): string {
  return s.split('\n')[0].slice(0, 300);
}

function firstServerUrl(doc: JsonObject): string | null {
  const servers = Array.isArray(doc.servers) ? (doc.servers as JsonObject[]) : [];
  const server = servers.find((s) => s && typeof s.url === 'string');
  if (!server) return null;
  const vars = (server.variables ?? {}) as Record<string, { default?: unknown }>;
  const url = (server.url as string).replace(/\{([^}]+)\}/g, (m, name: string) => (vars[name]?.default !== undefined ? String(vars[name].default) : m));
  return url.replace(/\/+$/, '') || '/';
}
