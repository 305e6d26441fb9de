import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Container } from '../../container.js';
import { ConnectBody, ImportConnectorBody, ImportConnectorUrlBody, InvokeBody } from '../../connectors/connectors.schemas.js';
import { AppError } from '../../errors.js';
import { sendCachedJson } from '../json-cache.js';
import { multipartError } from '../multipart.js';
import { PageQuery, pageOf, type Router } from '../router.js';
import { zodIssuesToDetail } from '../validation.js';

/**
 * Connectors, connections, the operation catalog, the operation schema (spec 4.2) and invoke
 * (docs/contract.md#connectors).
 */

const tags = ['connectors'];
const ConnectorParams = z.object({ connector_id: z.string().min(1) });
/** The multipart form of the import, for the OpenAPI document: the first file part is the document. */
const ImportConnectorMultipart = z.object({
  name: z.string().describe('Name of the connector.'),
  description: z.string().optional().describe('Free-text description.'),
  file: z.string().meta({ format: 'binary', description: 'The OpenAPI or Swagger document (JSON or YAML); the first file part counts.' }),
});
const ConnectionParams = ConnectorParams.extend({ connection_id: z.string().min(1) });
const OperationParams = ConnectionParams.extend({ operation_id: z.string().min(1) });
const OperationsQuery = z.object({ connection_id: z.string().min(1).optional(), query: z.string().max(500).optional() });

export function connectorsRoutes(router: Router, c: Container): void {
  const svc = c.connectors;

  router.route(
    {
      method: 'POST',
      url: '/v1/connectors',
      summary: 'Import an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON, YAML or multipart file)',
      tags,
      status: 201,
      bodyDocs: { 'application/json': ImportConnectorBody, 'multipart/form-data': ImportConnectorMultipart },
    },
    async ({ principal, request }) => {
      const { body, size } = request.isMultipart() ? await readMultipartImport(request, c.config.files.maxFileBytes) : { body: request.body, size: undefined };
      const parsed = ImportConnectorBody.safeParse(body ?? {}, { reportInput: true });
      if (!parsed.success) throw AppError.validation(zodIssuesToDetail(parsed.error.issues, ['body']));
      return svc.importConnector(principal.organizationId, parsed.data, size);
    },
  );

  router.route(
    { method: 'POST', url: '/v1/connectors/import_url', summary: 'Import an OpenAPI document the server fetches from a URL (egress policy, size cap)', tags, body: ImportConnectorUrlBody, status: 201 },
    ({ principal, body, reply }) => svc.importFromUrl(principal.organizationId, body, abortOnClose(reply)),
  );

  router.route({ method: 'GET', url: '/v1/connectors', summary: 'List connectors', tags, query: PageQuery }, async ({ principal, query }) => {
    const { items, total } = await svc.list(principal.organizationId, query.page, query.per_page);
    return pageOf(items, total, query.page, query.per_page);
  });

  router.route({ method: 'GET', url: '/v1/connectors/:connector_id', summary: 'Get a connector', tags, params: ConnectorParams }, ({ principal, params }) =>
    svc.get(principal.organizationId, params.connector_id),
  );

  router.route(
    { method: 'DELETE', url: '/v1/connectors/:connector_id', summary: 'Delete a connector with its connections', tags, params: ConnectorParams, status: 204 },
    async ({ principal, params, reply }) => {
      await svc.delete(principal.organizationId, params.connector_id);
      return reply.code(204).send();
    },
  );

  router.route(
    { method: 'POST', url: '/v1/connectors/:connector_id/connect', summary: 'Create a connection (base URL and credentials)', tags, params: ConnectorParams, body: ConnectBody, status: 201 },
    ({ principal, params, body }) => svc.connect(principal.organizationId, params.connector_id, body),
  );

  router.route(
    { method: 'GET', url: '/v1/connectors/:connector_id/connections', summary: "List a connector's connections", tags, params: ConnectorParams, query: PageQuery },
    async ({ principal, params, query }) => {
      const { items, total } = await svc.listConnections(principal.organizationId, params.connector_id, query.page, query.per_page);
      return pageOf(items, total, query.page, query.per_page);
    },
  );

  router.route(
    { method: 'DELETE', url: '/v1/connectors/:connector_id/connections/:connection_id', summary: 'Delete a connection', tags, params: ConnectionParams, status: 204 },
    async ({ principal, params, reply }) => {
      await svc.deleteConnection(principal.organizationId, params.connector_id, params.connection_id);
      return reply.code(204).send();
    },
  );

  router.route(
    { method: 'GET', url: '/v1/tools/connectors/:connector_id/operations', summary: "List or search a connector's operations", tags, params: ConnectorParams, query: OperationsQuery },
    ({ principal, params, query }) => svc.operations(principal.organizationId, params.connector_id, { connectionId: query.connection_id, query: query.query }),
  );

  router.route(
    { method: 'GET', url: '/v1/connectors/:connector_id/:connection_id/operations', summary: "List or search a connection's operations", tags, params: ConnectionParams, query: OperationsQuery.pick({ query: true }) },
    ({ principal, params, query }) => svc.operations(principal.organizationId, params.connector_id, { connectionId: params.connection_id, query: query.query }),
  );

  router.route(
    { method: 'GET', url: '/v1/tools/connectors/:connector_id/connections/:connection_id/:operation_id/schema', summary: 'Get the input and output schema of an operation', tags, params: OperationParams },
    async ({ principal, params, reply }) =>
      // The schema comes from the service's cache: serialise each cached schema once.
      sendCachedJson(reply, await svc.operationSchema(principal.organizationId, params.connector_id, params.connection_id, params.operation_id)),
  );

  router.route(
    { method: 'POST', url: '/v1/tools/connectors/:connector_id/connections/:connection_id/:operation_id/invoke', summary: 'Invoke an operation through a connection', tags, params: OperationParams, body: InvokeBody },
    ({ principal, params, body, reply }) =>
      c.connectorInvoker.invoke(
        { organizationId: principal.organizationId, connectorId: params.connector_id, connectionId: params.connection_id, operationId: params.operation_id },
        body,
        abortOnClose(reply),
      ),
  );
}

/** Fields `name` and `description`; the document is the file part (any field name) or an `openapi` text field. */
async function readMultipartImport(request: FastifyRequest, maxFileBytes: number): Promise<{ body: Record<string, unknown>; size?: number }> {
  const body: Record<string, unknown> = {};
  let size: number | undefined;
  try {
    await readImportParts(request, maxFileBytes, body, (n) => (size = n));
  } catch (e) {
    throw multipartError(request, e);
  }
  return { body, size };
}

async function readImportParts(request: FastifyRequest, maxFileBytes: number, body: Record<string, unknown>, setSize: (n: number) => void): Promise<void> {
  let fileTaken = false;
  for await (const part of request.parts({ limits: { fileSize: maxFileBytes } })) {
    if (part.type === 'field') {
      if (typeof part.value === 'string' && !(part.fieldname in body)) body[part.fieldname] = part.value;
      continue;
    }
    // The first file is the document; later ones are drained unread instead of being buffered for nothing.
    if (fileTaken) {
      part.file.resume();
      continue;
    }
    fileTaken = true;
    const bytes = await part.toBuffer().catch((e: { code?: string }) => {
      if (e.code === 'FST_REQ_FILE_TOO_LARGE') throw new AppError('too_large', `File ${part.filename || part.fieldname} is larger than ${maxFileBytes} bytes`);
      throw e;
    });
    if (body.openapi === undefined || typeof body.openapi === 'string') {
      body.openapi = bytes.toString('utf8');
      setSize(bytes.length);
    }
  }
}

/** Aborts the upstream call when the client goes away before the answer is written. */
export function abortOnClose(reply: FastifyReply): AbortSignal {
  const ctl = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ctl.abort(new Error('client closed the request'));
  });
  return ctl.signal;
}
