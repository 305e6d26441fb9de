import { z } from 'zod';
import type { DocumentedRoute } from './router.js';

/** Builds the OpenAPI 3.1 document from the same zod schemas that validate requests. */
export function buildOpenApi(routes: DocumentedRoute[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const op: Record<string, unknown> = { summary: r.summary, tags: r.tags, operationId: opId(r) };
    const parameters: unknown[] = [];
    for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
      const js = schema && toJson(schema);
      const props = (js?.properties ?? {}) as Record<string, unknown>;
      const required = new Set((js?.required as string[]) ?? []);
      for (const [name, s] of Object.entries(props)) parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: s });
    }
    if (parameters.length) op.parameters = parameters;
    if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: toJson(r.body) } } };
    op.responses = {
      [String(r.status)]: { description: r.status === 501 ? 'Not implemented (the detail says why)' : 'Success', ...(r.response ? { content: { 'application/json': { schema: toJson(r.response, 'output') } } } : {}) },
      ...(r.body || r.query || r.params ? { 422: { description: 'Validation Error' } } : {}),
      ...(r.auth ? { 401: { description: 'API key not specified' }, 403: { description: 'Invalid API key' } } : {}),
    };
    if (r.auth) op.security = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];
    (paths[path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Agentry API', version: '0.001', description: 'Self-hostable backend for AI agents, compatible with the xpander.ai v1 API.' },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        ApiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
    },
    paths,
  };
}

function toJson(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const js = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete js.$schema;
  return js;
}

function opId(r: DocumentedRoute): string {
  return (r.method.toLowerCase() + r.url.replace(/[:{}]/g, '').replace(/[^A-Za-z0-9]+/g, '_')).replace(/_+$/, '');
}
