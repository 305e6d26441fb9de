import { upgradeFromTwoToThree, validate } from '@scalar/openapi-parser';
import { parseDocument } from 'yaml';
import { AppError } from '../../errors.js';
import { jsonTooDeep } from '../../http/json-depth.js';

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

/**
 * Deepest nesting (objects and arrays) an imported document may have. The parser's validator, the reference
 * resolver and the inliner walk documents recursively: a schema nested 3,000 levels deep overflowed the stack
 * (issue 20). Real documents stay far below (a schema 100 properties deep is already absurd).
 */
export const MAX_DOCUMENT_DEPTH = 256;
/** YAML aliases a document may expand: a few are normal, a "billion laughs" document needs millions. */
export const MAX_YAML_ALIASES = 1000;

export async function loadOpenApiDocument(input: unknown, loc: (string | number)[] = ['body', 'openapi']): Promise<LoadedDocument> {
  let raw: unknown;
  try {
    if (typeof input === 'string') {
      if (!input.trim()) throw new Error('the document is empty');
      raw = parseText(input, loc);
    } else if (input && typeof input === 'object' && !Array.isArray(input)) {
      // The upgrader rewrites objects in place: work on a copy of what the caller gave us.
      raw = structuredClone(input);
    } else throw new Error('expected an OpenAPI document (object, JSON or YAML)');
  } catch (e) {
    if (e instanceof AppError) throw e;
    if (e instanceof RangeError) throw tooDeep(loc);
    throw AppError.invalid(loc, `Invalid OpenAPI document: ${firstLine((e as Error).message)}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw AppError.invalid(loc, 'Invalid OpenAPI document: not an object');
  if (deeperThan(raw, MAX_DOCUMENT_DEPTH)) throw tooDeep(loc);
  const obj = raw as JsonObject;
  const sourceVersion = typeof obj.openapi === 'string' ? obj.openapi : typeof obj.swagger === 'string' ? obj.swagger : undefined;
  if (!sourceVersion || !/^(2\.0|3\.[01])(\.\d+)?$/.test(sourceVersion)) {
    throw AppError.invalid(loc, 'Invalid OpenAPI document: expected OpenAPI 3.0, 3.1 or Swagger 2.0 (an "openapi" or "swagger" version field)');
  }
  let result: Awaited<ReturnType<typeof validate>>;
  try {
    result = await validate(obj);
  } catch (e) {
    if (e instanceof RangeError) throw tooDeep(loc);
    throw e;
  }
  const fatal = (result.errors ?? []).filter((e) => !TOLERATED.test(e.message));
  // The validator follows references recursively: a chain of thousands overflows its stack, which it reports.
  if (fatal.some((e) => /call stack/i.test(e.message))) throw tooDeep(loc);
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

/**
 * JSON, or YAML with the core schema only: a tag it does not know (`!!js/function`, `!custom`) is refused rather
 * than read as a string, and alias expansion is bounded. (The parser's own `normalize` allowed 10,000 aliases,
 * printed unknown tags as process warnings and accepted them.)
 */
function parseText(text: string, loc: (string | number)[]): unknown {
  if (text.trimStart().startsWith('{')) {
    if (jsonTooDeep(text, MAX_DOCUMENT_DEPTH)) throw tooDeep(loc);
    try {
      return JSON.parse(text);
    } catch {
      // Not JSON after all: YAML flow style starts with `{` too.
    }
  }
  const doc = parseDocument(text, { merge: true, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length) {
    // The YAML parser reports its own stack overflow on deep flow collections as a parse error.
    if (/call stack/i.test(doc.errors[0].message)) throw tooDeep(loc);
    throw new Error(doc.errors[0].message);
  }
  const tag = doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (tag) throw AppError.invalid(loc, `Invalid OpenAPI document: ${firstLine(tag.message)} (only plain YAML is accepted: no custom or language-specific tags)`);
  return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
}

function tooDeep(loc: (string | number)[]): AppError {
  return AppError.invalid(loc, `Invalid OpenAPI document: nested deeper than ${MAX_DOCUMENT_DEPTH} levels (references included)`);
}

/** Whether a parsed value nests objects and arrays deeper than `max`; iterative, so any depth is safe to ask about. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  // YAML aliases share objects: one is walked again only when reached deeper than before, so the answer is the
  // longest path and each object is walked at most `max` times (aliases are bounded separately).
  const best = new Map<object, number>();
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (d > max) return true;
    const before = best.get(v);
    if (before !== undefined && before >= d) continue;
    best.set(v, d);
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child && typeof child === 'object') stack.push([child, d + 1]);
  }
  return false;
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
