import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError, type ValidationIssue } from '../errors.js';
import type { Principal } from '../auth/principal.js';
import { defaultRouteRole, type KeyRole } from '../auth/roles.js';
import { zodIssuesToDetail } from './validation.js';
import { boolParsingIssue, parseTextBool } from '../lib/text-bool.js';
import { hasNulText, NUL_MESSAGE } from '../lib/nul-text.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Schema = z.ZodType | undefined;
type Out<S extends Schema> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteSpec<B extends Schema, Q extends Schema, P extends Schema> {
  method: Method;
  /** Fastify path syntax: /v1/agents/:agent_id */
  url: string;
  summary: string;
  tags?: string[];
  body?: B;
  query?: Q;
  params?: P;
  /** Documented success status; the handler may still set another on the reply. */
  status?: number;
  /** For the OpenAPI document only. */
  response?: z.ZodType;
  /** For the OpenAPI document only: request bodies by media type, for a handler that reads its body itself (multipart). */
  bodyDocs?: Record<string, z.ZodType>;
  /** Routes under /v1 require a principal unless this is false. */
  auth?: boolean;
  /** The least role of the calling key (src/auth/roles.ts); default read-only for GET, member otherwise. */
  role?: KeyRole;
}

export interface RouteContext<B extends Schema, Q extends Schema, P extends Schema> {
  principal: Principal;
  body: Out<B>;
  query: Out<Q>;
  params: Out<P>;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface DocumentedRoute {
  method: Method;
  url: string;
  summary: string;
  tags: string[];
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  status: number;
  response?: z.ZodType;
  bodyDocs?: Record<string, z.ZodType>;
  auth: boolean;
  role: KeyRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * Thin typed routing over Fastify: validates body, query and path with zod (collecting every issue into one 422),
 * hands the handler typed values and the principal, and records the route for GET /openapi.json.
 */
/**
 * Personal agents (docs/access.md) checked once for every route, whatever service it reaches: a path naming an agent
 * (`:agent_id`) or a task (`:task_id`) the caller may not see answers exactly as a missing one. Admins see everything,
 * so their calls skip it.
 */
export interface ScopeGuard {
  agentVisible(viewer: Principal, agentId: string): Promise<boolean>;
  taskVisible(viewer: Principal, taskId: string): Promise<boolean>;
}

export class Router {
  readonly routes: DocumentedRoute[] = [];

  constructor(
    private readonly app: FastifyInstance,
    private readonly scope?: ScopeGuard,
  ) {}

  route<B extends Schema = undefined, Q extends Schema = undefined, P extends Schema = undefined>(
    spec: RouteSpec<B, Q, P>,
    handler: (ctx: RouteContext<B, Q, P>) => Promise<unknown> | unknown,
  ): void {
    const auth = spec.auth ?? spec.url.startsWith('/v1/');
    const status = spec.status ?? 200;
    // The role matrix lives here, in the route definitions: the auth hook enforces it before any handler runs.
    const role = spec.role ?? defaultRouteRole(spec.method);
    this.routes.push({ ...spec, tags: spec.tags ?? [], status, auth, role });
    this.app.route({
      method: spec.method,
      url: spec.url,
      config: { auth, role },
      handler: async (request, reply) => {
        // NUL names nothing (and PostgreSQL cannot even compare text holding it: issue 20's fuzzer got 500s).
        if (spec.params && hasNulText(request.params as Record<string, unknown>)) throw new AppError('not_found', 'Not Found');
        const issues: ValidationIssue[] = [];
        if (spec.query) nulIssues(request.query, issues);
        const params = parsePart(spec.params, request.params, 'path', issues);
        const query = parsePart(spec.query, request.query, 'query', issues);
        const body = parsePart(spec.body, request.body, 'body', issues);
        if (issues.length) throw AppError.validation(issues);
        if (this.scope && request.principal && request.principal.role !== 'admin') await checkScope(this.scope, request.principal, request.params);
        const result = await handler({
          principal: request.principal as Principal,
          body: body as Out<B>,
          query: query as Out<Q>,
          params: params as Out<P>,
          request,
          reply,
        });
        if (reply.sent || result === reply) return reply;
        if (reply.statusCode === 200 && status !== 200) reply.code(status);
        return result;
      },
    });
  }
}

async function checkScope(scope: ScopeGuard, viewer: Principal, params: unknown): Promise<void> {
  const p = (params ?? {}) as Record<string, unknown>;
  if (typeof p.agent_id === 'string' && !(await scope.agentVisible(viewer, p.agent_id))) throw AppError.notFound('Agent');
  if (typeof p.task_id === 'string' && !(await scope.taskVisible(viewer, p.task_id))) throw AppError.notFound('Task');
}

function nulIssues(query: unknown, issues: ValidationIssue[]): void {
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if ((typeof v === 'string' && v.includes('\u0000')) || (Array.isArray(v) && v.some((x) => typeof x === 'string' && x.includes('\u0000')))) {
      issues.push({ loc: ['query', k], msg: NUL_MESSAGE, type: 'string_type' });
    }
  }
}

function parsePart(schema: z.ZodType | undefined, value: unknown, loc: string, issues: ValidationIssue[]): unknown {
  if (!schema) return undefined;
  const r = schema.safeParse(value, { reportInput: true });
  if (r.success) return r.data;
  issues.push(...zodIssuesToDetail(r.error.issues, [loc]));
  return undefined;
}

const BOOL_PARSING = boolParsingIssue([]).msg;

/** Query-string helpers: values arrive as strings. */
export const qs = {
  int: (min: number, max: number, def: number) => z.coerce.number().int().min(min).max(max).default(def),
  /** As webhook parameters and forms read booleans (lib/text-bool.ts): `true/false/1/0/yes/no` in any case. */
  bool: () =>
    z.union([z.boolean(), z.string()]).transform((v, ctx) => {
      const b = parseTextBool(v);
      if (b === undefined) {
        ctx.addIssue({ code: 'custom', message: BOOL_PARSING, params: { type: 'bool_parsing' } });
        return z.NEVER;
      }
      return b;
    }),
};

/** Standard list paging: page >= 1 (default 1), per_page 1..50 (default 20). */
export const PageQuery = z.object({
  page: qs.int(1, 1_000_000, 1),
  per_page: qs.int(1, 50, 20),
});

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  per_page: number;
  total_pages: number;
}

export function pageOf<T>(items: T[], total: number, page: number, perPage: number): Page<T> {
  return { items, total, page, per_page: perPage, total_pages: Math.ceil(total / perPage) };
}
