import { AppError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isEgressRefused, type SafeFetch } from '../../net/index.js';
import type { ConnectorsService } from '../connectors.service.js';
import { TokenEndpointError, type OAuthTokenCache } from './oauth-token-cache.js';
import { buildRequest, type InvokePayload } from './request-builder.js';
import { applySecurity } from './security.js';

/**
 * Invokes a connector operation (docs/contract.md#connector-invoke): validate the payload against the operation's
 * `input`, build the request, apply the connection's credentials, send it through the egress-checked fetch with the
 * connection's timeout, and parse the answer. Used by the REST invoke endpoint and by agents' action tools.
 */

export interface InvokeResult {
  status_code: number;
  result: unknown;
  headers: Record<string, string>;
  execution_time_ms: number;
}

export interface InvokeTarget {
  organizationId: string;
  /** A connector id, or `_` to take it from the connection. */
  connectorId: string;
  connectionId: string;
  /** Catalog id or operationId. */
  operationId: string;
}

/** Larger upstream answers are refused rather than held in memory (and in an LLM's context). */
const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export class OperationInvoker {
  constructor(
    private readonly connectors: ConnectorsService,
    private readonly fetch: SafeFetch,
    private readonly tokens: OAuthTokenCache,
    private readonly clock: Clock,
  ) {}

  async invoke(target: InvokeTarget, payload: InvokePayload, signal?: AbortSignal): Promise<InvokeResult> {
    const conn = await this.connectors.openConnection(target.organizationId, target.connectorId, target.connectionId);
    const op = await this.connectors.prepared(target.organizationId, conn.record.connectorId, target.operationId);
    // Absent parameter parts are empty objects, so a missing required parameter is reported by name.
    const checked = await op.validate({
      query_params: payload.query_params ?? {},
      path_params: payload.path_params ?? {},
      ...(payload.body_params !== undefined ? { body_params: payload.body_params } : {}),
      headers: payload.headers ?? {},
      ...(payload.cookies ? { cookies: payload.cookies } : {}),
    });
    if (checked.issues.length) throw AppError.validation(checked.issues);
    // As validated: scalars given as text are coerced to the schema's types.
    const normalized = checked.value as InvokePayload;

    const baseUrl = conn.record.baseUrl ?? conn.connector.serverUrl;
    if (!baseUrl || !/^https?:\/\//i.test(baseUrl)) throw AppError.invalid(['path', 'connection_id'], 'The connection has no base_url and the document has no absolute server URL');

    const timeoutMs = conn.record.timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const started = this.clock.now();
    const send = async () => {
      const req = build(() => buildRequest(baseUrl, op.operation.path, op.operation.method, op.plan, normalized, { headers: conn.headers, query: conn.generalParams }));
      if (conn.security) {
        await applySecurity(req, conn.security, { connectionId: conn.record.id, fetch: this.fetch, tokens: this.tokens, signal: combined });
      }
      return this.fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal: combined });
    };
    try {
      let res = await send();
      // A cached OAuth token the upstream no longer accepts (revoked early): fetch a fresh one, once.
      if (res.status === 401 && conn.security?.type === 'oauth2_client_credentials') {
        await res.body?.cancel();
        this.tokens.invalidate(conn.record.id);
        res = await send();
      }
      const result = await readBody(res);
      return {
        status_code: res.status,
        result,
        headers: Object.fromEntries(res.headers.entries()),
        execution_time_ms: Math.max(0, this.clock.now() - started),
      };
    } catch (e) {
      throw this.mapError(e, timeout, timeoutMs, signal);
    }
  }

  private mapError(e: unknown, timeout: AbortSignal, timeoutMs: number, signal?: AbortSignal): unknown {
    if (e instanceof AppError) return e;
    if (isEgressRefused(e)) return new AppError('forbidden', (e as Error).message);
    if (timeout.aborted) return new AppError('timeout', `Upstream request timed out after ${timeoutMs / 1000} s`);
    if (signal?.aborted) return e;
    if (e instanceof TokenEndpointError) return new AppError('upstream', e.message);
    if (e instanceof ResponseTooLarge) return new AppError('upstream', e.message);
    const cause = (e as { cause?: { code?: string } }).cause;
    return new AppError('upstream', `Upstream request failed${cause?.code ? ` (${cause.code})` : ''}`, { cause: e });
  }
}

class ResponseTooLarge extends Error {}

/**
 * Building the request from the caller's parameters happens before anything is sent: whatever fails there is the
 * caller's mistake (422), never an upstream failure (502, as it was: issue 20).
 */
function build<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw AppError.invalid(['body'], 'The request cannot be built from these parameters');
  }
}

/** JSON when the upstream says so (or the text parses as JSON), else text; empty -> null. */
async function readBody(res: Response): Promise<unknown> {
  if (!res.body) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      await res.body.cancel().catch(() => {});
      throw new ResponseTooLarge(`Upstream response larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MB`);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return null;
  const type = (res.headers.get('content-type') ?? '').toLowerCase();
  if (type.includes('json') || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
