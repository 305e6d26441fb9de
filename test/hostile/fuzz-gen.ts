/**
 * Request generation for the route fuzzer (fuzz-routes.test.ts): a seeded PRNG, values from an operation's JSON
 * Schema (as /openapi.json gives it), and the hostile mutations issue 20's attack used. Everything is a pure
 * function of the seed, so a failure is reproduced by running with the printed AGENTRY_FUZZ_SEED.
 */

export type Rng = () => number;

/** mulberry32: small, fast, good enough for test data. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rng, n: number) => Math.floor(r() * n);

type Schema = Record<string, unknown>;

/** A JSON nesting `depth` levels deep, as text (building it as a value would overflow JSON.stringify first). */
export function deepJson(depth: number, leaf = '1'): string {
  return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
}

export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  'x'.repeat(200_000),
  '\u0000',
  '\ud800',
  '💥🧨\u202e\u200b',
  'é☃ 日本語',
  '%zz%',
  '../../../etc/passwd',
  '<script>alert(1)</script>',
  "' or 1=1 --",
  '{{7*7}}${7*7}',
  'null',
  '-1',
  '1e309',
  'http://127.0.0.1:1/x',
  'a\r\nx-injected: 1',
  '__proto__',
  'constructor',
];

export const HOSTILE_VALUES: readonly unknown[] = [
  null,
  true,
  0,
  -1,
  -0.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  [],
  {},
  [null],
  { __proto__: null, constructor: { prototype: { polluted: 1 } } },
  ...HOSTILE_STRINGS,
];

/** A plausible value for a schema (valid where it is easy to be), with hostile leaves now and then. */
export function valueFor(r: Rng, schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return pick(r, HOSTILE_VALUES);
  if (r() < 0.08) return pick(r, HOSTILE_VALUES);
  if (Array.isArray(schema.enum) && schema.enum.length) return pick(r, schema.enum);
  if ('const' in schema) return schema.const;
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[k];
    if (Array.isArray(list) && list.length) return valueFor(r, pick(r, list) as Schema, depth + 1);
  }
  const type = Array.isArray(schema.type) ? pick(r, schema.type as string[]) : (schema.type as string | undefined);
  switch (type) {
    case 'string':
      if (schema.format === 'uri' || /url/i.test(String(schema.description ?? ''))) return 'http://127.0.0.1:1/x';
      return r() < 0.7 ? `s-${int(r, 1e6)}` : pick(r, HOSTILE_STRINGS);
    case 'integer':
      return pick(r, [0, 1, 3, -1, 1000, 2 ** 31, 2 ** 53 + 1]);
    case 'number':
      return pick(r, [0, 0.5, -1, 1e308]);
    case 'boolean':
      return r() < 0.5;
    case 'null':
      return null;
    case 'array': {
      const n = int(r, 3);
      return Array.from({ length: n }, () => valueFor(r, schema.items as Schema, depth + 1));
    }
    case 'object':
    default: {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required as string[]) ?? []);
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(props)) if (required.has(k) || r() < 0.5) out[k] = valueFor(r, s, depth + 1);
      return out;
    }
  }
}

export interface RawBody {
  label: string;
  /** Undefined: no body at all. */
  payload?: string | Buffer;
  contentType?: string;
}

/** Bodies for one case: a schema-shaped value mutated one way, or a hostile text. */
export function bodyFor(r: Rng, schema: Schema | undefined, kase: number): RawBody {
  const base = valueFor(r, schema);
  const obj = base && typeof base === 'object' && !Array.isArray(base) ? (base as Record<string, unknown>) : {};
  const keys = Object.keys(obj);
  const json = (label: string, v: unknown): RawBody => ({ label, payload: JSON.stringify(v), contentType: 'application/json' });
  switch (kase % 18) {
    case 0:
      return json('schema-shaped', base);
    case 1: {
      const required = ((schema?.required as string[]) ?? []).slice();
      const copy = { ...obj };
      if (required.length) delete copy[pick(r, required)];
      return json('missing required', copy);
    }
    case 2: {
      const copy = { ...obj };
      copy[keys.length ? pick(r, keys) : 'x'] = pick(r, HOSTILE_VALUES);
      return json('wrong type', copy);
    }
    case 3:
      return json('nulls', Object.fromEntries((keys.length ? keys : ['x']).map((k) => [k, null])));
    case 4: {
      const copy = { ...obj };
      copy[keys.length ? pick(r, keys) : 'name'] = 'y'.repeat(500_000);
      return json('huge string', copy);
    }
    case 5:
      return { label: 'nested 5000 deep', payload: deepJson(5000), contentType: 'application/json' };
    case 6: {
      // Just under the listener's limit, inside a field: what reaches services and their recursive walkers.
      const field = keys.length ? pick(r, keys) : 'x';
      const rest = JSON.stringify({ ...obj, [field]: undefined }).slice(1, -1);
      return { label: `nested 250 deep in ${field}`, payload: `{${rest}${rest ? ',' : ''}"${field}":${deepJson(250)}}`, contentType: 'application/json' };
    }
    case 7:
      return json('unicode', Object.fromEntries((keys.length ? keys : ['name']).map((k) => [k, pick(r, ['\ud800\udfff\u0000', '💥\u202e', 'ÿ\uffff'])])));
    case 8:
      return json('numbers', Object.fromEntries((keys.length ? keys : ['page']).map((k) => [k, pick(r, [-1, -(2 ** 63), 1e308, 2 ** 53 + 1, 0.0001])])));
    case 9:
      return json('array body', [base]);
    case 10:
      return { label: 'prototype keys', payload: `{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}${keys.length ? ',' + JSON.stringify(obj).slice(1) : '}'}`, contentType: 'application/json' };
    case 11:
      return { label: 'empty json', payload: '', contentType: 'application/json' };
    case 12:
      return { label: 'text/plain', payload: JSON.stringify(base), contentType: 'text/plain' };
    case 13:
      return { label: 'multipart without boundary', payload: '--x\r\n\r\n', contentType: 'multipart/form-data' };
    case 14:
      return { label: 'malformed json', payload: pick(r, ['{', '{"a":}', '[1,]', '\u0000', '{"a":1}{"b":2}', 'nul']), contentType: 'application/json' };
    case 15:
      return json('wide object', Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i])));
    case 16:
      return json('long array', Array.from({ length: 50_000 }, (_, i) => i));
    default:
      return { label: 'no body', payload: undefined };
  }
}

/** A path parameter: a real id now and then, else something hostile (percent-encoded for the URL). */
export function pathParam(r: Rng, real: readonly string[]): string {
  if (real.length && r() < 0.4) return pick(r, real);
  return pick(r, [
    'a'.repeat(128),
    'a'.repeat(129),
    'b'.repeat(3000),
    '%zz',
    '%',
    '%00',
    '%E0%A4%A',
    '..',
    '%2e%2e%2f',
    encodeURIComponent('💥 é/x'),
    '-1',
    '0',
    'null',
    '00000000-0000-0000-0000-000000000000',
    'wh_x',
    encodeURIComponent('__proto__'),
    'constructor',
  ]);
}

/** A query string for the operation's query parameters, hostile values included. */
export function queryFor(r: Rng, names: readonly string[]): string {
  const parts: string[] = [];
  for (const n of names) {
    if (r() < 0.5) continue;
    const v = pick(r, ['-1', '0', '1e9', '99999999999999999999', 'abc', '', '%zz', '%ff', 'x'.repeat(5000), 'draft', 'true', 'null', encodeURIComponent('💥')]);
    parts.push(`${n}=${v}`);
    if (r() < 0.1) parts.push(`${n}=${v}`);
  }
  if (r() < 0.1) parts.push('__proto__[polluted]=1');
  return parts.length ? '?' + parts.join('&') : '';
}
