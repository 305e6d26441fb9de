import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConnectorsRepository } from '../../src/connectors/connectors.repository.js';
import { createTestApp, TEST_DBS, type TestApp } from '../support/harness.js';

/**
 * Acceptance: the schema endpoint over every document of the shared corpus, compared with an independent reading
 * of the same document (a plain JSON-pointer dereference written here, not the product's inliner) for parameter
 * names, required lists, and top-level body and response properties. No `$ref` may remain.
 *
 * Big documents are sampled deterministically (evenly spaced operations, first and last included) to keep the
 * file's wall time bounded; every document is covered. AGENTRY_CORPUS_MAX_OPS=100000 checks every operation.
 */

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), '../../../shared/openapi-corpus');
const FILES = readdirSync(CORPUS).filter((f) => /\.(json|ya?ml)$/.test(f)).sort();
/** Operations checked per document: a broad sample on the first database, a smaller one on the other. */
const maxOps = (kind: string) => Number(process.env.AGENTRY_CORPUS_MAX_OPS ?? (kind === TEST_DBS[0] ? 25 : 5));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type J = Record<string, any>;

/** Big documents take seconds to parse on a loaded machine: each is parsed once per file run, for both databases. */
const rawCache = new Map<string, J>();
function parseRaw(file: string): J {
  let doc = rawCache.get(file);
  if (!doc) {
    const text = readFileSync(join(CORPUS, file), 'utf8');
    doc = (file.endsWith('.json') ? JSON.parse(text) : YAML.parse(text, { maxAliasCount: -1 })) as J;
    rawCache.set(file, doc);
  }
  return doc;
}

/** Per-document time limit: generous, because parsing a 3 MB YAML document on a shared CI core takes seconds. */
const DOC_TIMEOUT_MS = 240_000;

/** Follows local `$ref` pointers; anything else (external, by $id, null) reads as unknown. */
function deref(doc: J, node: any, seen = new Set<string>()): any {
  while (node && typeof node === 'object' && typeof node.$ref === 'string') {
    const ref: string = node.$ref;
    if (!ref.startsWith('#/') || seen.has(ref)) return undefined;
    seen.add(ref);
    let cur: any = doc;
    for (const seg of ref.slice(2).split('/')) cur = cur?.[decodeURIComponent(seg).replace(/~1/g, '/').replace(/~0/g, '~')];
    node = cur;
  }
  return node;
}

/** Property names and required names at the top of a schema, through allOf (both sides are read the same way). */
function topLevel(doc: J, schema: any, depth = 0): { props: Set<string>; required: Set<string>; opaque: boolean } {
  const out = { props: new Set<string>(), required: new Set<string>(), opaque: false };
  const s = deref(doc, schema);
  if (!s || typeof s !== 'object' || depth > 10) return { ...out, opaque: true };
  // Siblings of a $ref apply together with its target (JSON Schema 2020-12).
  if (schema && typeof schema === 'object' && typeof schema.$ref === 'string') {
    const { $ref: _ref, ...siblings } = schema;
    if (Object.keys(siblings).length) {
      const sib = topLevel(doc, siblings, depth + 1);
      sib.props.forEach((p) => out.props.add(p));
      sib.required.forEach((p) => out.required.add(p));
    }
  }
  if (s['x-recursive'] || s['x-truncated']) return { ...out, opaque: true };
  for (const k of Object.keys(s.properties ?? {})) if (k !== '$ref') out.props.add(k);
  for (const r of Array.isArray(s.required) ? s.required : []) if (r !== '$ref') out.required.add(r);
  for (const m of Array.isArray(s.allOf) ? s.allOf : []) {
    const sub = topLevel(doc, m, depth + 1);
    sub.props.forEach((p) => out.props.add(p));
    sub.required.forEach((p) => out.required.add(p));
    out.opaque ||= sub.opaque;
  }
  return out;
}

const base = (t: string) => t.split(';')[0].trim().toLowerCase();
const isJson = (t: string) => base(t) === 'application/json' || base(t).endsWith('+json');

function pickRequestMedia(content: J | undefined): string | undefined {
  const types = Object.keys(content ?? {});
  return (
    types.find((t) => base(t) === 'application/json') ??
    types.find((t) => base(t).endsWith('+json')) ??
    types.find((t) => base(t) === 'application/x-www-form-urlencoded') ??
    types.find((t) => base(t) === 'multipart/form-data') ??
    types[0]
  );
}

interface Expected {
  params: Record<string, { names: string[]; required: string[] }>;
  body?: { schema?: any; formNames?: string[]; formRequired?: string[] };
  output?: any;
}

/** What the operation should look like, read straight from the raw document. */
function expectedFor(doc: J, path: string, method: string): Expected {
  const swagger2 = typeof doc.swagger === 'string';
  const item = deref(doc, doc.paths[path]) ?? {};
  const op = item[method];
  const merged = new Map<string, J>();
  for (const list of [item.parameters, op.parameters]) for (const raw of Array.isArray(list) ? list : []) {
    const p = deref(doc, raw);
    if (p && typeof p.name === 'string') merged.set(`${p.in}:${p.name}`, p);
  }
  const params: Expected['params'] = {};
  const part = { query: 'query_params', path: 'path_params', header: 'headers', cookie: 'cookies' } as Record<string, string>;
  const exp: Expected = { params };
  for (const p of merged.values()) {
    if (swagger2 && p.in === 'body') {
      exp.body = { schema: p.schema };
      continue;
    }
    if (swagger2 && p.in === 'formData') {
      exp.body ??= { formNames: [], formRequired: [] };
      exp.body.formNames?.push(p.name);
      if (p.required) exp.body.formRequired?.push(p.name);
      continue;
    }
    const name = part[p.in];
    if (!name) continue;
    params[name] ??= { names: [], required: [] };
    params[name].names.push(p.name);
    if (p.required || p.in === 'path') params[name].required.push(p.name);
  }
  if (!swagger2) {
    const rb = deref(doc, op.requestBody);
    const media = pickRequestMedia(rb?.content);
    if (media) exp.body = { schema: rb.content[media]?.schema };
  }
  const codes = Object.keys(op.responses ?? {})
    .filter((c) => /^2(\d\d|XX)$/i.test(c))
    .sort((a, b) => (/X/i.test(a) ? 300 : Number(a)) - (/X/i.test(b) ? 300 : Number(b)));
  for (const code of codes) {
    const res = deref(doc, op.responses[code]);
    if (!res) continue;
    if (swagger2) {
      const produces: string[] = op.produces ?? doc.produces ?? [];
      if (!res.schema || (produces.length && !produces.some(isJson))) continue;
      exp.output = res.schema;
      break;
    }
    const media = Object.keys(res.content ?? {}).filter(isJson);
    const chosen = media.find((t) => base(t) === 'application/json') ?? media[0];
    if (!chosen) continue;
    exp.output = res.content[chosen].schema ?? {};
    break;
  }
  return exp;
}

function refsIn(node: unknown): number {
  if (!node || typeof node !== 'object') return 0;
  if (Array.isArray(node)) return node.reduce((n: number, x) => n + refsIn(x), 0);
  return Object.entries(node).reduce((n, [k, v]) => n + (k === '$ref' ? 1 : 0) + refsIn(v), 0);
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

/** Evenly spaced operations, always including the first and the last. */
function sample<T>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  return Array.from({ length: max }, (_, i) => items[Math.round((i * (items.length - 1)) / (max - 1))]);
}

describe.each(TEST_DBS)('schema endpoint over the OpenAPI corpus (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(async () => t?.close());

  it('finds the corpus', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(20);
  });

  it.each(FILES)('%s', async (file) => {
    const raw = parseRaw(file);
    const text = readFileSync(join(CORPUS, file), 'utf8');
    const imported = await t.req('POST', '/v1/connectors', { name: file, openapi: text });
    expect(imported.statusCode, imported.body.slice(0, 300)).toBe(201);
    const connectorId = imported.json().id;
    const conn = await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'c', base_url: 'https://api.example.com' });
    const connectionId = conn.json().id;
    const catalog: { id: string; operationId: string; path: string; method: string }[] = (
      await t.req('GET', `/v1/tools/connectors/${connectorId}/operations`)
    ).json();

    const rawOps = Object.entries(raw.paths ?? {}).flatMap(([path, item]: [string, any]) =>
      METHODS.filter((m) => item && typeof item === 'object' && item[m]).map((method) => ({ path, method })),
    );
    expect(catalog.length).toBe(rawOps.length);
    expect(imported.json().total_operations).toBe(rawOps.length);
    expect(new Set(catalog.map((o) => o.operationId)).size).toBe(catalog.length);
    if (!catalog.length) {
      const none = await t.req('GET', `/v1/tools/connectors/${connectorId}/connections/${connectionId}/anything/schema`);
      expect(none.statusCode).toBe(404);
      return;
    }

    for (const op of sample(catalog, maxOps(kind))) {
      const where = `${file} ${op.method} ${op.path}`;
      const r = await t.req('GET', `/v1/tools/connectors/${connectorId}/connections/${connectionId}/${encodeURIComponent(op.operationId)}/schema`);
      expect(r.statusCode, where).toBe(200);
      const s = r.json();
      expect(s.id, where).toBe(op.id);
      expect(refsIn(s), where).toBe(0);
      expect(s.input.type).toBe('object');
      expect(Object.keys(s.input.properties).slice(0, 3), where).toEqual(['query_params', 'path_params', 'body_params']);

      const exp = expectedFor(raw, op.path, op.method);
      for (const part of ['query_params', 'path_params', 'headers', 'cookies']) {
        const got = s.input.properties[part];
        const want = exp.params[part];
        if (!want) {
          if (part === 'headers' || part === 'cookies') expect(got, `${where} ${part}`).toBeUndefined();
          else expect(Object.keys(got.properties), `${where} ${part}`).toEqual([]);
          continue;
        }
        expect(sorted(Object.keys(got.properties)), `${where} ${part}`).toEqual(sorted(want.names));
        expect(sorted(got.required ?? []), `${where} ${part} required`).toEqual(sorted(want.required));
        expect(s.input.required.includes(part), `${where} ${part} in input.required`).toBe(want.required.length > 0);
      }

      const body = s.input.properties.body_params;
      if (!exp.body) expect(body, `${where} body`).toEqual({ type: 'object', properties: {} });
      else if (exp.body.formNames) {
        expect(sorted(Object.keys(body.properties ?? {})), `${where} form body`).toEqual(sorted(exp.body.formNames));
        expect(sorted(body.required ?? []), `${where} form body required`).toEqual(sorted(exp.body.formRequired ?? []));
      } else if (exp.body.schema !== undefined) {
        const want = topLevel(raw, exp.body.schema);
        const got = topLevel(s, body);
        if (!want.opaque) {
          expect(sorted(got.props), `${where} body properties`).toEqual(sorted(want.props));
          expect(sorted(got.required), `${where} body required`).toEqual(sorted(want.required));
        }
      }

      if (exp.output === undefined) expect(s.output, `${where} output`).toEqual({});
      else {
        const want = topLevel(raw, exp.output);
        const got = topLevel(s, s.output);
        if (!want.opaque) {
          expect(sorted(got.props), `${where} output properties`).toEqual(sorted(want.props));
          expect(sorted(got.required), `${where} output required`).toEqual(sorted(want.required));
        }
      }
    }
  }, DOC_TIMEOUT_MS);

  it('parses a big document once: schema requests after the import read no document', async () => {
    const text = readFileSync(join(CORPUS, 'kubernetes__swagger.json'), 'utf8');
    const imported = await t.req('POST', '/v1/connectors', { name: 'k8s', openapi: text });
    const connectorId = imported.json().id;
    const conn = (await t.req('POST', `/v1/connectors/${connectorId}/connect`, { name: 'c', base_url: 'https://k8s.example.com' })).json();
    const ops: { operationId: string }[] = (await t.req('GET', `/v1/tools/connectors/${connectorId}/operations?query=namespaced`)).json();
    const reads = vi.spyOn(ConnectorsRepository.prototype, 'findDocument');
    try {
      for (const op of sample(ops, 25)) {
        const r = await t.req('GET', `/v1/tools/connectors/_/connections/${conn.id}/${op.operationId}/schema`);
        expect(r.statusCode).toBe(200);
      }
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  }, DOC_TIMEOUT_MS);
});
