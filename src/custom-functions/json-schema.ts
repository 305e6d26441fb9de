import { setBounded } from '../lib/bounded-map.js';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ValidationIssue } from '../errors.js';
import { strictRegExp } from '../lib/safe-regexp.js';
import { schemaSizeProblem } from '../lib/schema-limits.js';

/**
 * JSON Schema checks for custom-function arguments. Compiled validators are cached by schema text: the same
 * function is executed many times with the same schema.
 */

// Patterns run on RE2 (linear time); one RE2 cannot run makes the schema invalid, so create answers 422 naming it.
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true, code: { regExp: strictRegExp } });
const cache = new Map<string, ValidateFunction>();
const MAX_CACHE = 500;

/** Returns a reason when `schema` is not a usable argument schema (an object schema, valid JSON Schema). */
export function argumentSchemaProblem(schema: Record<string, unknown>): string | undefined {
  if (Object.keys(schema).length === 0) return undefined;
  if (schema.type !== undefined && schema.type !== 'object') return 'input_schema must describe an object (type "object")';
  const tooLarge = schemaSizeProblem(schema);
  if (tooLarge) return `input_schema is too large: ${tooLarge}`;
  try {
    compile(schema);
    return undefined;
  } catch (e) {
    return `input_schema is not a valid JSON Schema: ${(e as Error).message}`;
  }
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let fn = cache.get(key);
  if (!fn) {
    const tooLarge = schemaSizeProblem(schema);
    if (tooLarge) throw new Error(tooLarge);
    fn = ajv.compile(schema);
    setBounded(cache, key, fn, MAX_CACHE);
  }
  return fn;
}

/** Validates `value` against `schema`; issues are located under `loc` (e.g. ['body','args']). */
export function validateArguments(schema: Record<string, unknown>, value: unknown, loc: (string | number)[]): ValidationIssue[] {
  if (Object.keys(schema).length === 0) return [];
  let fn: ValidateFunction;
  try {
    fn = compile(schema);
  } catch (e) {
    // A schema stored before a limit existed: the arguments cannot be checked, so they are not accepted unchecked.
    return [{ loc, msg: `Value error, the function's input_schema cannot be used: ${(e as Error).message}`, type: 'value_error' }];
  }
  if (fn(value)) return [];
  return (fn.errors ?? []).map((e) => toIssue(e, loc));
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
