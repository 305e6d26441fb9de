import { z } from 'zod';
import { isoTime } from '../lib/clock.js';
import type { CustomFunctionRecord } from './custom-functions.repository.js';

const JsonObject = z.record(z.string(), z.unknown());

export const CustomFunctionCreateBody = z
  .object({
    name: z.string().min(1).max(200),
    description: z.string().max(4000).nullish(),
    /** JavaScript defining `async function run(args)`. */
    code: z.string().min(1).max(100_000),
    input_schema: JsonObject.nullish(),
  })
  .strict();

export const CustomFunctionPatchBody = CustomFunctionCreateBody.partial().strict();

export const CustomFunctionExecuteBody = z.object({ args: JsonObject.default({}) }).strict().optional();

export const CustomFunctionParams = z.object({ id: z.string().min(1).max(128) });

export function presentCustomFunction(f: CustomFunctionRecord) {
  return {
    id: f.id,
    organization_id: f.organizationId,
    name: f.name,
    description: f.description,
    language: 'javascript',
    code: f.code,
    input_schema: f.inputSchema,
    status: f.status,
    analysis_error_details: f.analysisErrorDetails,
    created_at: isoTime(f.createdAt),
    updated_at: isoTime(f.updatedAt),
  };
}
