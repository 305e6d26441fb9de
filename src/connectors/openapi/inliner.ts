import type { JsonObject } from './document.js';
import type { RefResolver } from './refs.js';

/**
 * Turns schemas with `$ref`s into self-contained JSON Schema, as docs/contract.md#inlining requires:
 *
 * - a reference is replaced by a copy of its target, `$ref` siblings merged over it (siblings win);
 * - a reference to a schema already being expanded on the current path (a cycle) becomes
 *   `{type, description: "Recursive reference to X", "x-recursive": "X"}`;
 * - references are expanded shallowest first (breadth-first by data depth: `properties`/`items` go one level
 *   deeper, `allOf`/`oneOf`/`anyOf` do not) while the node budget lasts; one that does not fit becomes
 *   `{type, description, "x-truncated": "X"}`. Depth 0 (the top level of a part or of the output) is always
 *   expanded, whatever it costs.
 *
 * One inliner instance is one budget: use one for `input` and another for `output`.
 */

interface Pending {
  placeholder: JsonObject;
  siblings: JsonObject;
  key: string;
  name: string;
  target: unknown;
  depth: number;
  nest: number;
  ancestors: ReadonlySet<string>;
}

/** Keywords whose values are maps of subschemas, and whether they nest the data one level deeper. */
const SCHEMA_MAPS: Record<string, boolean> = { properties: true, patternProperties: true, dependentSchemas: false };
/** Keywords whose value is one subschema. */
const SCHEMA_SINGLE: Record<string, boolean> = {
  items: true,
  additionalProperties: true,
  additionalItems: true,
  unevaluatedProperties: true,
  unevaluatedItems: true,
  contains: true,
  propertyNames: true,
  not: false,
  if: false,
  then: false,
  else: false,
};
/** Keywords whose value is an array of subschemas. */
const SCHEMA_LISTS: Record<string, boolean> = { allOf: false, anyOf: false, oneOf: false, prefixItems: true, items: true };

/**
 * Dropped from the output: identifiers and containers that only mattered for resolving references, and
 * documentation-tool extras. Vendor extensions (`x-*`) are dropped too: they are tool-specific and can be
 * large; the inliner's own markers (`x-recursive`, `x-truncated`) are added afterwards.
 */
const DROPPED = new Set(['$id', '$schema', '$anchor', '$dynamicAnchor', '$vocabulary', '$comment', '$defs', 'definitions', 'xml', 'externalDocs']);

const sizeCache = new WeakMap<object, number>();

/** Multiple of the budget that always-expanded top-level references may use in total. */
const FORCED_CEILING = 20;
const FORCED_MINIMUM = 100_000;

/**
 * Deepest nesting of subschemas in an output. References are expanded one after the other, so a chain of them
 * (even at data depth 0, through `allOf`) could nest an output as deep as the forced ceiling allows, and everything
 * that walks it recursively (JSON, Ajv, the LLM request) would overflow the stack (issue 20). Deeper subschemas
 * become `x-truncated` markers; real documents stay far below.
 */
export const MAX_SCHEMA_NESTING = 64;

export class SchemaInliner {
  private used = 0;
  private readonly buckets: Pending[][] = [];

  constructor(
    private readonly resolver: RefResolver,
    private readonly budget: number,
  ) {}

  /** Schema nodes produced so far (references expanded plus inline nodes). */
  get nodes(): number {
    return this.used;
  }

  /**
   * Copies a schema found at data depth `depth`. References inside it are queued and filled in by `finish()`,
   * so the returned object is complete only after that call.
   */
  add(schema: unknown, depth: number): unknown {
    return this.copy(schema, depth, new Set(), 0);
  }

  /** Expands the queued references, shallowest first, within the budget. */
  finish(): void {
    for (let d = 0; d < this.buckets.length; d++) {
      const bucket = this.buckets[d];
      if (!bucket) continue;
      // Expanding may queue more references at this same depth (through allOf/oneOf/anyOf).
      for (let i = 0; i < bucket.length; i++) this.expand(bucket[i]);
      this.buckets[d] = [];
    }
  }

  private expand(p: Pending): void {
    const cost = shallowSize(p.target) - 1;
    // Depth 0 is always expanded, up to a hard ceiling that only a crafted document (diamonds of allOf at the top
    // level, growing exponentially) can reach.
    const limit = p.depth === 0 ? Math.max(this.budget * FORCED_CEILING, FORCED_MINIMUM) : this.budget;
    if (this.used + cost > limit) {
      Object.assign(p.placeholder, this.marker(p.target, p.name, 'x-truncated', p.siblings));
      return;
    }
    const ancestors = new Set(p.ancestors).add(p.key);
    let content = this.copy(p.target, p.depth, ancestors, p.nest);
    if (typeof content === 'boolean') content = content ? {} : { not: {} };
    this.used -= 1; // the placeholder was already counted as this node
    Object.assign(p.placeholder, mergeSiblings(content as JsonObject, p.siblings));
  }

  private marker(target: unknown, name: string, kind: 'x-truncated' | 'x-recursive', siblings: JsonObject = {}): JsonObject {
    const type = typeOf(target, this.resolver);
    const own = target && typeof target === 'object' ? (target as JsonObject).description : undefined;
    const description =
      kind === 'x-recursive'
        ? `Recursive reference to ${name}`
        : typeof siblings.description === 'string'
          ? siblings.description
          : typeof own === 'string' && own
            ? own
            : `Truncated reference to ${name}`;
    return { ...(type !== undefined ? { type } : {}), description, [kind]: name };
  }

  private copy(node: unknown, depth: number, ancestors: ReadonlySet<string>, nest: number): unknown {
    if (typeof node === 'boolean') {
      this.used++;
      return node;
    }
    if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
    const src = node as JsonObject;
    if (nest > MAX_SCHEMA_NESTING) {
      this.used++;
      return this.marker(src, `a subschema nested deeper than ${MAX_SCHEMA_NESTING} levels`, 'x-truncated');
    }
    if (typeof src.$ref === 'string') return this.reference(src, depth, ancestors, nest);
    this.used++;
    const inner = nest + 1;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(src)) {
      if (DROPPED.has(k) || k === '$ref' || k.startsWith('x-')) continue;
      if (k in SCHEMA_MAPS && v && typeof v === 'object' && !Array.isArray(v)) {
        const child = SCHEMA_MAPS[k] ? depth + 1 : depth;
        const m: JsonObject = {};
        for (const [name, sub] of Object.entries(v as JsonObject)) {
          // A property literally named "$ref" (SCIM, Kubernetes' JSONSchemaProps) would read as an unresolved
          // reference to every consumer of the schema; it is left out
          // (docs/decisions.md#connectors-the-operation-schema).
          if (name === '$ref') continue;
          m[name] = this.copy(sub, child, ancestors, inner);
        }
        out[k] = m;
      } else if (k in SCHEMA_LISTS && Array.isArray(v)) {
        const child = SCHEMA_LISTS[k] ? depth + 1 : depth;
        out[k] = v.map((sub) => this.copy(sub, child, ancestors, inner));
      } else if (k in SCHEMA_SINGLE && v !== null && typeof v === 'object') {
        out[k] = this.copy(v, SCHEMA_SINGLE[k] ? depth + 1 : depth, ancestors, inner);
      } else if (k === 'discriminator' && v && typeof v === 'object') {
        out[k] = discriminatorWithoutRefs(v as JsonObject);
      } else {
        out[k] = v;
      }
    }
    // OpenAPI 3.0 `nullable` (and Swagger 2.0's `x-nullable`) expressed the 3.1 way, so every output reads alike.
    if ((src.nullable === true || src['x-nullable'] === true) && typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      delete out.nullable;
      if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    }
    if (Array.isArray(out.required) && src.properties && typeof src.properties === 'object' && '$ref' in (src.properties as JsonObject)) {
      out.required = (out.required as unknown[]).filter((r) => r !== '$ref');
    }
    return out;
  }

  private reference(src: JsonObject, depth: number, ancestors: ReadonlySet<string>, nest: number): JsonObject {
    const { $ref, ...rest } = src;
    const siblings = Object.keys(rest).length ? (this.copy(rest, depth, ancestors, nest) as JsonObject) : {};
    if (Object.keys(rest).length) this.used--; // the sibling holder is not a node of its own
    const resolved = this.resolver.resolve($ref as string);
    this.used++;
    if (!resolved) {
      const name = String($ref).split('/').pop() || String($ref);
      return { ...siblings, ...this.marker(undefined, name, 'x-truncated', siblings) };
    }
    if (ancestors.has(resolved.key)) return { ...siblings, ...this.marker(resolved.target, resolved.name, 'x-recursive') };
    const placeholder: JsonObject = {};
    (this.buckets[depth] ??= []).push({ placeholder, siblings, key: resolved.key, name: resolved.name, target: resolved.target, depth, nest, ancestors });
    return placeholder;
  }
}

/**
 * `$ref` siblings apply together with the target (JSON Schema 2020-12): `required` lists are joined and
 * `properties` combined; for annotations and other keywords the sibling, the more specific statement, wins.
 */
function mergeSiblings(content: JsonObject, siblings: JsonObject): JsonObject {
  if (!Object.keys(siblings).length) return content;
  const out: JsonObject = { ...content, ...siblings };
  if (Array.isArray(content.required) && Array.isArray(siblings.required)) out.required = [...new Set([...content.required, ...siblings.required])];
  if (isObject(content.properties) && isObject(siblings.properties)) out.properties = { ...content.properties, ...siblings.properties };
  return out;
}

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** Schema nodes of a target not counting what its own references would add (each reference counts one). */
function shallowSize(node: unknown): number {
  if (!node || typeof node !== 'object') return 1;
  const cached = sizeCache.get(node);
  if (cached !== undefined) return cached;
  let n = 0;
  const walk = (s: unknown) => {
    if (typeof s === 'boolean') return void n++;
    if (!s || typeof s !== 'object' || Array.isArray(s)) return;
    n++;
    const o = s as JsonObject;
    if (typeof o.$ref === 'string') return;
    for (const [k, v] of Object.entries(o)) {
      if (k in SCHEMA_MAPS && v && typeof v === 'object') Object.values(v as JsonObject).forEach(walk);
      else if (k in SCHEMA_LISTS && Array.isArray(v)) v.forEach(walk);
      else if (k in SCHEMA_SINGLE) walk(v);
    }
  };
  walk(node);
  sizeCache.set(node, n);
  return n;
}

/** The JSON type a marker carries: the schema's own type, else what its keywords imply. */
function typeOf(target: unknown, resolver: RefResolver, hops = 0): unknown {
  if (!target || typeof target !== 'object') return undefined;
  const t = target as JsonObject;
  if (t.type !== undefined) return t.type;
  if (typeof t.$ref === 'string' && hops < 5) return typeOf(resolver.resolve(t.$ref)?.target, resolver, hops + 1);
  if (t.properties || t.additionalProperties || t.patternProperties) return 'object';
  if (t.items || t.prefixItems) return 'array';
  for (const k of ['allOf', 'oneOf', 'anyOf']) {
    const list = t[k];
    if (Array.isArray(list) && list.length) {
      const types = new Set(list.map((s) => typeOf(s, resolver, hops + 1)).filter((x) => typeof x === 'string'));
      if (types.size === 1) return [...types][0];
    }
  }
  return undefined;
}

/** Discriminator mappings point at schemas by reference; after inlining, the schema name is what remains useful. */
function discriminatorWithoutRefs(d: JsonObject): JsonObject {
  if (!d.mapping || typeof d.mapping !== 'object') return d;
  const mapping: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.mapping as Record<string, unknown>)) {
    mapping[k] = typeof v === 'string' ? v.split('/').pop()!.replace(/~1/g, '/').replace(/~0/g, '~') : String(v);
  }
  return { ...d, mapping };
}
