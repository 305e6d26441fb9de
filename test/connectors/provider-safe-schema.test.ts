import { describe, expect, it } from 'vitest';
import { providerSafeToolName, schemaDialectFor, toProviderSafeSchema, TOOL_NAME_PATTERN } from '../../src/tools/provider-safe-schema.js';

const INPUT = {
  type: 'object',
  properties: {
    query_params: {
      type: 'object',
      properties: {
        limit: { type: ['integer', 'null'], format: 'int32', example: 5, default: 10 },
        sort: { type: 'string', enum: ['asc', 'desc'], 'x-internal': true },
        when: { type: 'string', format: 'date' },
        tags: { type: 'array' },
      },
      required: ['limit', 'gone'],
    },
    path_params: { type: 'object', properties: {} },
    body_params: {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { type: 'object', properties: { b: { oneOf: [{ type: 'string' }, { type: 'number' }], discriminator: { propertyName: 'x' } } } },
      ],
      additionalProperties: false,
      patternProperties: { '^x': { type: 'string' } },
      not: { required: ['c'] },
    },
  },
  required: ['query_params'],
};

/** Every keyword anywhere in a schema tree (property names excluded). */
function keywords(node: unknown, out = new Set<string>()): Set<string> {
  if (!node || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    node.forEach((n) => keywords(n, out));
    return out;
  }
  for (const [k, v] of Object.entries(node)) {
    if (k === 'properties') Object.values(v as object).forEach((p) => keywords(p, out));
    else {
      out.add(k);
      keywords(v, out);
    }
  }
  return out;
}

describe('provider-safe tool schemas', () => {
  it('maps providers to dialects', () => {
    expect(schemaDialectFor('openai')).toBe('openai');
    expect(schemaDialectFor('nebius')).toBe('openai');
    expect(schemaDialectFor('anthropic')).toBe('anthropic');
    expect(schemaDialectFor('gemini')).toBe('gemini');
    expect(schemaDialectFor('google_ai_studio')).toBe('gemini');
    expect(schemaDialectFor(undefined)).toBe('generic');
  });

  it('OpenAI: no allOf/oneOf/not/patternProperties/defaults, arrays have items, required names exist', () => {
    const s = toProviderSafeSchema(INPUT, 'openai');
    expect(s.type).toBe('object');
    const kws = keywords(s);
    for (const k of ['allOf', 'oneOf', 'not', 'patternProperties', 'default', 'example', 'discriminator', 'x-internal']) expect(kws.has(k), k).toBe(false);
    const q = (s.properties as any).query_params;
    expect(q.required).toEqual(['limit']);
    expect(q.properties.tags).toEqual({ type: 'array', items: {} });
    expect(q.properties.limit.type).toEqual(['integer', 'null']);
    const body = (s.properties as any).body_params;
    expect(body.type).toBe('object');
    expect(Object.keys(body.properties)).toEqual(['a', 'b']);
    expect(body.required).toEqual(['a']);
    expect(body.properties.b.anyOf).toHaveLength(2);
    expect(body.additionalProperties).toBe(false);
  });

  it('Gemini: single types with nullable, string enums only, supported formats only, no additionalProperties', () => {
    const s = toProviderSafeSchema({ ...INPUT, properties: { ...INPUT.properties, mode: { enum: [1, 2] }, c: { const: 'x' } } }, 'gemini');
    const q = (s.properties as any).query_params.properties;
    expect(q.limit).toEqual({ type: 'integer', nullable: true, format: 'int32' });
    expect(q.when).toEqual({ type: 'string' });
    expect(q.sort).toEqual({ type: 'string', enum: ['asc', 'desc'] });
    expect((s.properties as any).mode).toEqual({});
    expect((s.properties as any).c).toEqual({ type: 'string', enum: ['x'] });
    expect(keywords(s).has('additionalProperties')).toBe(false);
    expect(keywords(s).has('oneOf')).toBe(false);
  });

  it('always answers a top-level object', () => {
    expect(toProviderSafeSchema({ type: 'string' }, 'anthropic')).toEqual({ type: 'object', properties: {} });
    expect(toProviderSafeSchema(undefined)).toEqual({ type: 'object', properties: {} });
  });

  it('makes names provider-safe and unique', () => {
    const taken = new Set<string>();
    const a = providerSafeToolName('repos/list-for-user (v2)', taken);
    const b = providerSafeToolName('repos/list-for-user (v2)', taken);
    const long = providerSafeToolName('x'.repeat(100), taken);
    expect(a).toBe('repos_list-for-user_v2');
    expect(b).toBe('repos_list-for-user_v2_2');
    expect(long).toHaveLength(64);
    for (const n of [a, b, long, providerSafeToolName('!!!', taken)]) expect(n).toMatch(TOOL_NAME_PATTERN);
  });
});
