import { z } from 'zod';
import { HEADER_NAME, HEADER_VALUE } from './invoke/request-builder.js';

/** Request bodies of the connectors routes (docs/contract.md#connectors). */

export const ImportConnectorBody = z
  .object({
    name: z.string().min(1).max(200),
    description: z.string().max(10_000).nullish(),
    // The document itself: an object, or JSON/YAML text. Checked by the OpenAPI loader, which names the problem.
    openapi: z.union([z.string(), z.record(z.string(), z.unknown())]),
  })
  .strict();
export type ImportConnectorBody = z.infer<typeof ImportConnectorBody>;

/** `POST /v1/connectors/import_url`: the document is fetched by the server (egress policy, size cap, deadline). */
export const ImportConnectorUrlBody = z
  .object({
    name: z.string().min(1).max(200),
    description: z.string().max(10_000).nullish(),
    url: z
      .string()
      .max(4096)
      .refine((u) => URL.canParse(u) && /^https?:$/i.test(new URL(u).protocol), 'Input should be a valid http or https URL'),
  })
  .strict();
export type ImportConnectorUrlBody = z.infer<typeof ImportConnectorUrlBody>;

/** What fetch can send as a header (RFC 9110 token; a value without CR, LF, NUL or characters outside Latin-1). */
const HeaderName = z.string().regex(HEADER_NAME, 'Invalid header name');
const HeaderValue = z.string().regex(HEADER_VALUE, 'Invalid header value: control characters or characters outside Latin-1');

export const SecurityConfig = z.discriminatedUnion('type', [
  z
    .object({ type: z.literal('api_key'), in: z.enum(['header', 'query']), name: z.string().min(1), value: z.string().min(1) })
    .strict()
    .superRefine((v, ctx) => {
      if (v.in !== 'header') return;
      if (!HeaderName.safeParse(v.name).success) ctx.addIssue({ code: 'custom', path: ['name'], message: 'Invalid header name' });
      if (!HeaderValue.safeParse(v.value).success) ctx.addIssue({ code: 'custom', path: ['value'], message: 'Invalid header value' });
    }),
  z.object({ type: z.literal('bearer'), token: HeaderValue.min(1) }).strict(),
  z.object({ type: z.literal('basic'), username: z.string(), password: z.string() }).strict(),
  z
    .object({
      type: z.literal('oauth2_client_credentials'),
      token_url: z.string().url(),
      client_id: z.string().min(1),
      client_secret: z.string().min(1),
      scopes: z.union([z.array(z.string()), z.string().transform((s) => s.split(/[\s,]+/).filter(Boolean))]).default([]),
    })
    .strict(),
]);
export type SecurityConfig = z.infer<typeof SecurityConfig>;
export type SecurityKind = SecurityConfig['type'];

const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const ConnectBody = z
  .object({
    name: z.string().min(1).max(200),
    base_url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'base_url must be an http or https URL')
      .nullish(),
    security: SecurityConfig.nullish(),
    headers: z.record(HeaderName, HeaderValue).nullish(),
    general_params: z.record(z.string(), scalar).nullish(),
    /** Upstream timeout for this connection's calls, seconds (default 30). */
    timeout_seconds: z.number().positive().max(300).nullish(),
  })
  .strict();
export type ConnectBody = z.infer<typeof ConnectBody>;

/** The invoke body: the shape of the operation's `input` schema, which validates it further. */
export const InvokeBody = z
  .object({
    query_params: z.record(z.string(), z.unknown()).nullish(),
    path_params: z.record(z.string(), z.unknown()).nullish(),
    body_params: z.unknown().optional(),
    headers: z.record(z.string(), z.unknown()).nullish(),
    cookies: z.record(z.string(), z.unknown()).nullish(),
  })
  .strict();
export type InvokeBody = z.infer<typeof InvokeBody>;
