/**
 * JSON Schema -> a tool schema every LLM provider accepts. Connector operation schemas come from third-party
 * documents and use keywords that providers refuse (OpenAI strict mode rejects allOf/oneOf/not/patternProperties,
 * Gemini takes only an OpenAPI 3.0 subset with single types and string enums, every provider needs an object at
 * the top level). The argument *shape* is never changed (properties keep their names), so the model's arguments
 * can be passed on as they are.
 */

export type SchemaDialect = 'openai' | 'anthropic' | 'gemini' | 'generic';

type Json = Record<string, unknown>;

/** The providers whose function declarations follow Google's OpenAPI subset. */
const GEMINI_PROVIDERS = new Set(['gemini', 'google_ai_studio', 'google', 'vertex']);
const ANTHROPIC_PROVIDERS = new Set(['anthropic', 'amazon_bedrock']);

/** Model provider (LLMModelProvider) -> schema dialect. OpenAI-compatible providers share OpenAI's rules. */
export function schemaDialectFor(provider: string | null | undefined): SchemaDialect {
  if (!provider) return 'generic';
  if (GEMINI_PROVIDERS.has(provider)) return 'gemini';
  if (ANTHROPIC_PROVIDERS.has(provider)) return 'anthropic';
  return 'openai';
}

/** Keywords no provider needs: annotations for documentation tools and OpenAPI-only vocabulary. */
const ALWAYS_DROPPED = new Set([
  '$schema', '$id', '$anchor', '$comment', '$defs', 'definitions', 'discriminator', 'xml', 'externalDocs', 'example', 'examples',
  'readOnly', 'writeOnly', 'deprecated', 'contentMediaType', 'contentEncoding', 'contentSchema', 'nullable', '$ref',
]);

/** What OpenAI (strict mode included) and the "generic" intersection refuse. */
const OPENAI_DROPPED = new Set([
  'not', 'if', 'then', 'else', 'patternProperties', 'dependentRequired', 'dependentSchemas', 'unevaluatedProperties',
  'unevaluatedItems', 'contains', 'minContains', 'maxContains', 'propertyNames', 'prefixItems', 'additionalItems',
  'minProperties', 'maxProperties', 'default', 'uniqueItems',
]);

/** Gemini's Schema object: everything else is dropped. */
const GEMINI_ALLOWED = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required', 'minProperties',
  'maxProperties', 'minLength', 'maxLength', 'pattern', 'anyOf', 'items', 'minimum', 'maximum', 'propertyOrdering',
]);
const GEMINI_FORMATS: Record<string, Set<string>> = {
  string: new Set(['enum', 'date-time']),
  integer: new Set(['int32', 'int64']),
  number: new Set(['float', 'double']),
};

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** A name matching ^[a-zA-Z0-9_-]{1,64}$, unique within `taken` (which it updates). */
export function providerSafeToolName(label: string, taken: Set<string> = new Set(), fallback = 'tool'): string {
  const base = label.replace(/[^a-zA-Z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64) || fallback;
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 64 - String(i).length - 1)}_${i}`;
  taken.add(name);
  return name;
}

/** Converts a schema for the given dialect; the result always has `type: "object"` at the top. */
export function toProviderSafeSchema(schema: unknown, dialect: SchemaDialect = 'generic'): Json {
  const out = convert(schema, dialect, 0);
  const top: Json = out && typeof out === 'object' && !Array.isArray(out) ? (out as Json) : {};
  // The top level must be a plain object schema: no composition or enum there (OpenAI refuses them).
  const result: Json = { type: 'object', properties: (top.properties as Json) ?? {} };
  if (typeof top.description === 'string') result.description = top.description;
  if (Array.isArray(top.required) && top.required.length) result.required = top.required;
  if (dialect !== 'gemini' && top.additionalProperties !== undefined) result.additionalProperties = top.additionalProperties;
  return result;
}

function convert(node: unknown, dialect: SchemaDialect, depth: number): unknown {
  if (typeof node === 'boolean') return node ? {} : { not: {} };
  if (!node || typeof node !== 'object' || Array.isArray(node)) return {};
  let src = node as Json;
  if (Array.isArray(src.allOf) && dialect !== 'anthropic') src = mergeAllOf(src);
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (ALWAYS_DROPPED.has(k) || k.startsWith('x-')) continue;
    if (dialect === 'gemini' && !GEMINI_ALLOWED.has(k) && k !== 'oneOf' && k !== 'const' && k !== 'additionalProperties') continue;
    if ((dialect === 'openai' || dialect === 'generic') && OPENAI_DROPPED.has(k)) continue;
    switch (k) {
      case 'properties': {
        const props: Json = {};
        for (const [name, sub] of Object.entries((v ?? {}) as Json)) props[name] = convert(sub, dialect, depth + 1);
        out.properties = props;
        break;
      }
      case 'items':
        out.items = Array.isArray(v) ? convert(v[0] ?? {}, dialect, depth + 1) : convert(v, dialect, depth + 1);
        break;
      case 'additionalProperties':
        if (dialect === 'gemini') break;
        out.additionalProperties = typeof v === 'boolean' ? v : convert(v, dialect, depth + 1);
        break;
      case 'anyOf':
      case 'oneOf':
        // Strict OpenAI and Gemini know only anyOf; for a tool's arguments the difference does not matter.
        if (Array.isArray(v)) out.anyOf = [...((out.anyOf as unknown[]) ?? []), ...v.map((s) => convert(s, dialect, depth + 1))];
        break;
      case 'allOf':
        if (Array.isArray(v)) out.allOf = v.map((s) => convert(s, dialect, depth + 1));
        break;
      case 'not':
        out.not = convert(v, dialect, depth + 1);
        break;
      case 'const':
        if (dialect === 'gemini') {
          if (typeof v === 'string') out.enum = [v];
        } else out.const = v;
        break;
      default:
        out[k] = v;
    }
  }
  normaliseType(out, dialect);
  if (out.type === 'array' && out.items === undefined) out.items = {};
  if (Array.isArray(out.required) && out.properties) {
    const names = new Set(Object.keys(out.properties as Json));
    out.required = (out.required as unknown[]).filter((r) => typeof r === 'string' && names.has(r));
    if (!(out.required as unknown[]).length) delete out.required;
  } else if (out.required !== undefined && !Array.isArray(out.required)) delete out.required;
  return out;
}

/** Type arrays and Gemini's single-type rule; enum values Gemini cannot take. */
function normaliseType(out: Json, dialect: SchemaDialect): void {
  if (Array.isArray(out.type)) {
    const types = (out.type as unknown[]).filter((t): t is string => typeof t === 'string');
    const nonNull = types.filter((t) => t !== 'null');
    if (dialect === 'gemini') {
      if (nonNull.length) out.type = nonNull[0];
      else delete out.type;
      if (types.includes('null')) out.nullable = true;
    } else if (types.length === 1) out.type = types[0];
  }
  if (dialect === 'gemini') {
    if (Array.isArray(out.enum)) {
      const strings = (out.enum as unknown[]).filter((e): e is string => typeof e === 'string');
      if (strings.length && strings.length === (out.enum as unknown[]).filter((e) => e !== null).length && (out.type === 'string' || out.type === undefined)) {
        out.enum = strings;
        out.type = 'string';
      } else delete out.enum;
    }
    if (typeof out.format === 'string' && !GEMINI_FORMATS[String(out.type)]?.has(out.format)) delete out.format;
  }
}

/** allOf of object schemas -> one object schema (properties and required merged); other allOf kept as the first member. */
function mergeAllOf(src: Json): Json {
  const { allOf, ...rest } = src;
  const members = (allOf as unknown[]).map((m) => (m && typeof m === 'object' ? (Array.isArray((m as Json).allOf) ? mergeAllOf(m as Json) : (m as Json)) : {}));
  const merged: Json = { ...rest };
  const properties: Json = { ...((rest.properties as Json) ?? {}) };
  const required = new Set<string>(Array.isArray(rest.required) ? (rest.required as string[]) : []);
  let objectLike = true;
  for (const m of members) {
    const isObject = m.type === 'object' || m.properties !== undefined || (m.type === undefined && !m.items && !m.enum);
    if (!isObject) {
      objectLike = false;
      break;
    }
    Object.assign(properties, (m.properties as Json) ?? {});
    for (const r of Array.isArray(m.required) ? (m.required as string[]) : []) required.add(r);
    if (typeof m.description === 'string' && merged.description === undefined) merged.description = m.description;
    if (m.anyOf && !merged.anyOf) merged.anyOf = m.anyOf;
    if (m.oneOf && !merged.oneOf) merged.oneOf = m.oneOf;
  }
  if (!objectLike) return { ...members[0], ...rest };
  merged.type = 'object';
  merged.properties = properties;
  if (required.size) merged.required = [...required];
  return merged;
}
