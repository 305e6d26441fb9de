import type { ErrorObject } from 'ajv';
import type { ValidationIssue } from '../errors.js';
import type { SchemaChecker } from '../lib/schema-checker.js';
import { schemaSizeProblem } from '../lib/schema-limits.js';

/**
 * JSON Schema checks for custom-function arguments, run by the schema checker off the main thread (it compiles each
 * schema once and keeps it). Patterns run on RE2; one RE2 cannot run makes the schema invalid, so create answers
 * 422 naming it.
 */

/** Returns a reason when `schema` is not a usable argument schema (an object schema, valid JSON Schema). */
export async function argumentSchemaProblem(checker: SchemaChecker, owner: string, schema: Record<string, unknown>): Promise<string | undefined> {
  if (Object.keys(schema).length === 0) return undefined;
  if (schema.type !== undefined && schema.type !== 'object') return 'input_schema must describe an object (type "object")';
  const tooLarge = schemaSizeProblem(schema);
  if (tooLarge) return `input_schema is too large: ${tooLarge}`;
  const verdict = await checker.compiles(owner, 'arguments', schema);
  return verdict.kind === 'unusable' ? `input_schema is not a valid JSON Schema: ${verdict.reason}` : undefined;
}

/** Validates `value` against `schema`; issues are located under `loc` (e.g. ['body','args']). */
export async function validateArguments(
  checker: SchemaChecker,
  owner: string,
  schema: Record<string, unknown>,
  value: unknown,
  loc: (string | number)[],
): Promise<ValidationIssue[]> {
  if (Object.keys(schema).length === 0) return [];
  const verdict = await checker.validate(owner, 'arguments', schema, value);
  // A schema stored before a limit existed, or one that cannot be checked now: the arguments are not accepted unchecked.
  if (verdict.kind === 'unusable') return [{ loc, msg: `Value error, the function's input_schema cannot be used: ${verdict.reason}`, type: 'value_error' }];
  return verdict.kind === 'valid' ? [] : verdict.errors.map((e) => toIssue(e, loc));
}

function toIssue(e: ErrorObject, loc: (string | number)[]): ValidationIssue {
  const path = e.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  if (e.keyword === 'required') {
    return { loc: [...loc, ...path, (e.params as { missingProperty: string }).missingProperty], msg: 'Field required', type: 'missing' };
  }
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return { loc: [...loc, ...path, extra], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
  }
  if (e.keyword === 'type') {
    const t = String((e.params as { type: string }).type);
    const name = { string: 'string_type', integer: 'int_type', number: 'float_type', boolean: 'bool_type', object: 'dict_type', array: 'list_type' }[t];
    if (name) return { loc: [...loc, ...path], msg: `Input should be a valid ${t === 'object' ? 'dictionary' : t === 'array' ? 'list' : t}`, type: name };
  }
  if (e.keyword === 'enum') {
    return { loc: [...loc, ...path], msg: `Input should be ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`, type: 'enum' };
  }
  return { loc: [...loc, ...path], msg: `Value error, ${e.message ?? 'invalid value'}`, type: 'value_error' };
}
