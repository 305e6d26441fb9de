import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/harness.js';

/**
 * GET /openapi.json as the API reference reads it: every field and parameter described, the request bodies of the
 * routes that read their body themselves (connector import, document upload), and the webhook receiver's routes on
 * the webhook listener. The database plays no part: libsql only.
 */
describe('the OpenAPI document', () => {
  let t: TestApp;
  let doc: any;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
    doc = (await t.req('GET', '/openapi.json')).json();
  });
  afterAll(async () => t?.close());

  it('describes every property of every schema and every parameter', () => {
    const undescribed: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}[${i}]`));
      const o = node as Record<string, any>;
      if (o.properties && typeof o.properties === 'object') {
        for (const [name, p] of Object.entries<any>(o.properties)) if (!p?.description) undescribed.push(`${where}.${name}`);
      }
      for (const [k, v] of Object.entries(o)) walk(v, `${where}/${k}`);
    };
    walk(doc.paths, '');
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const p of op.parameters ?? []) if (!p.description) undescribed.push(`${method} ${path} parameter ${p.name}`);
      }
    }
    expect(undescribed).toEqual([]);
    // A description of the schema itself wins over the glossary's.
    const upload = doc.paths['/v1/connectors'].post.requestBody.content['multipart/form-data'].schema;
    expect(upload.properties.file).toMatchObject({ format: 'binary', description: expect.stringContaining('OpenAPI or Swagger document') });
  });

  it('documents the connector import and document upload bodies', () => {
    const imp = doc.paths['/v1/connectors'].post.requestBody.content;
    expect(Object.keys(imp).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(imp['application/json'].schema.required).toEqual(['name', 'openapi']);
    const docs = doc.paths['/v1/knowledge/{kb_id}/documents'].post.requestBody.content;
    expect(docs['application/json'].schema.properties.document_urls).toBeDefined();
    expect(docs['multipart/form-data'].schema.properties.files).toMatchObject({ type: 'array', items: { format: 'binary' } });
  });

  it('lists the webhook receiver routes with the webhook listener as their server', () => {
    for (const path of ['/wh_{secret}', '/']) {
      const item = doc.paths[path];
      expect(item.post.servers).toEqual([{ url: t.c.urls.webhook, description: expect.any(String) }]);
      expect(item.post.tags).toEqual(['webhook receiver']);
      expect(item.post.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['prompt', 'asynchronous', 'getter', 'json']));
      expect(Object.keys(item.post.requestBody.content)).toEqual(['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
    }
    expect(doc.paths['/'].post.parameters.map((p: { name: string }) => p.name)).toContain('agent_id');
  });
});
