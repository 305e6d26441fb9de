import { describe, expect, it } from 'vitest';
import { listOperations } from '../../src/connectors/openapi/catalog.js';
import type { JsonObject } from '../../src/connectors/openapi/document.js';
import { loadOpenApiDocument } from '../../src/connectors/openapi/document.js';
import { buildOperationSchema } from '../../src/connectors/openapi/operation-schema.js';
import { RefResolver } from '../../src/connectors/openapi/refs.js';

/** The inliner's contract rules (docs/contract.md#inlining) on small synthetic documents. */

function build(doc: JsonObject, operationId: string, budget = 5000): { input: any; output: any } {
  const op = listOperations(doc).find((o) => o.operationId === operationId)!;
  return buildOperationSchema(doc, new RefResolver(doc), op, budget).schema;
}

/** A wide, deep document: Level0 has 30 properties, each a reference to Level1, ... down to Level5. */
function deepDocument(): JsonObject {
  const schemas: JsonObject = {};
  for (let level = 0; level < 6; level++) {
    const properties: JsonObject = {};
    for (let i = 0; i < 30; i++) properties[`p${i}`] = level < 5 ? { $ref: `#/components/schemas/Level${level + 1}` } : { type: 'string' };
    schemas[`Level${level}`] = { type: 'object', description: level === 2 ? 'The second level' : undefined, properties };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'deep', version: '1' },
    paths: { '/deep': { post: { operationId: 'deep', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Level0' } } } }, responses: {} } } },
    components: { schemas },
  };
}

function count(node: unknown, key: string): number {
  if (!node || typeof node !== 'object') return 0;
  if (Array.isArray(node)) return node.reduce((n: number, x) => n + count(x, key), 0);
  return Object.entries(node).reduce((n, [k, v]) => n + (k === key ? 1 : 0) + count(v, key), 0);
}

describe('schema inliner', () => {
  it('expands shallowest first within the budget and marks what is left over', () => {
    const s = build(deepDocument(), 'deep', 200);
    const body = s.input.properties.body_params as any;
    // The top level is always expanded; first-level references are expanded in order while the budget lasts.
    expect(Object.keys(body.properties)).toHaveLength(30);
    expect(Object.keys(body.properties.p0.properties)).toHaveLength(30);
    // What did not fit is marked with its type and the target's description, or a generic one.
    expect(body.properties.p29).toEqual({ type: 'object', description: 'Truncated reference to Level1', 'x-truncated': 'Level1' });
    // Shallowest first: no second-level reference was expanded while first-level ones were left over.
    expect(body.properties.p0.properties.p0).toEqual({ type: 'object', description: 'The second level', 'x-truncated': 'Level2' });
    const expanded = (x: typeof s) => Object.values((x.input.properties.body_params as any).properties).filter((p: any) => p.properties).length;
    expect(expanded(s)).toBeGreaterThan(0);
    expect(expanded(s)).toBeLessThan(30);
    expect(count(s, '$ref')).toBe(0);
    // A bigger budget expands more.
    expect(expanded(build(deepDocument(), 'deep', 2000))).toBeGreaterThan(expanded(s));
  });

  it('always expands the top level, whatever the budget', () => {
    const doc = deepDocument();
    const s = build(doc, 'deep', 1);
    expect(Object.keys((s.input.properties.body_params as any).properties)).toHaveLength(30);
  });

  it('cuts cycles where the same schema repeats on the path, not elsewhere', () => {
    const doc: JsonObject = {
      openapi: '3.0.0',
      info: { title: 'c', version: '1' },
      paths: {
        '/x': {
          get: {
            operationId: 'x',
            responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } } } },
          },
        },
      },
      components: {
        schemas: {
          A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' }, b2: { $ref: '#/components/schemas/B' } } },
          B: { type: 'object', properties: { a: { $ref: '#/components/schemas/A' }, name: { type: 'string', nullable: true } } },
        },
      },
    };
    const out = build(doc, 'x').output as any;
    // B appears twice side by side (no cycle), each with its way back to A cut.
    expect(out.properties.b.properties.name).toEqual({ type: ['string', 'null'] });
    expect(out.properties.b2.properties.name).toEqual({ type: ['string', 'null'] });
    expect(out.properties.b.properties.a).toEqual({ type: 'object', description: 'Recursive reference to A', 'x-recursive': 'A' });
  });

  it('merges $ref siblings, keeps unresolvable references as markers, and resolves $id references', async () => {
    const loaded = await loadOpenApiDocument({
      openapi: '3.1.0',
      info: { title: 's', version: '1' },
      paths: {
        '/s': {
          post: {
            operationId: 's',
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      pet: { $ref: '#/components/schemas/Pet', description: 'the pet to store', required: ['id'] },
                      remote: { $ref: 'https://example.com/schemas/thing.json', description: 'elsewhere' },
                      byId: { $ref: '/schemas/owner' },
                    },
                  },
                },
              },
            },
            responses: { '204': { description: 'stored' } },
          },
        },
      },
      components: {
        schemas: {
          Pet: { type: 'object', description: 'A pet', required: ['name'], properties: { id: { type: 'integer' }, name: { type: 'string' } } },
          Owner: { $id: '/schemas/owner', type: 'object', properties: { email: { type: 'string' } } },
        },
      },
    });
    const s = build(loaded.document, 's');
    const props = (s.input.properties.body_params as any).properties;
    expect(props.pet.description).toBe('the pet to store');
    expect(props.pet.required).toEqual(['name', 'id']);
    expect(props.remote).toEqual({ description: 'elsewhere', 'x-truncated': 'thing.json' });
    expect(props.byId).toEqual({ type: 'object', properties: { email: { type: 'string' } } });
    expect(count(s, '$ref')).toBe(0);
  });
});
