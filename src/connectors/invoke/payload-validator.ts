import type { ErrorObject } from 'ajv';
import type { ValidationIssue } from '../../errors.js';
import type { SchemaChecker } from '../../lib/schema-checker.js';

/**
 * Validates an invoke payload against the operation's `input` schema and reports Pydantic-style issues with `loc`
 * under `body` (docs/contract.md#connector-invoke). Values that arrive as text on the wire anyway (numbers and booleans
 * in query, path and header parameters) are coerced the way a lax Pydantic model would. The schema checker compiles
 * and runs the schema off the main thread ('payload' flavour: any draft's keywords, patterns on RE2, one RE2
 * cannot run not enforced rather than failing a document the tenant did not write).
 */

/** The issues, and the payload as validated (scalars coerced): the request is built from `value`. */
export type PayloadValidator = (payload: unknown) => Promise<{ issues: ValidationIssue[]; value: unknown }>;

export function payloadValidator(checker: SchemaChecker, owner: string, schema: Record<string, unknown>): PayloadValidator {
  // A schema that cannot be used (does not compile, too deep or large, too slow): the structure we built ourselves
  // is checked instead, so required parameters are still reported by name.
  let fallback = false;
  return async (payload) => {
    let verdict = fallback ? undefined : await checker.validate(owner, 'payload', schema, payload);
    if (!verdict || verdict.kind === 'unusable') {
      fallback = true;
      verdict = await checker.validate(owner, 'payload', structuralOnly(schema), payload);
    }
    if (verdict.kind === 'unusable') return { issues: [], value: payload };
    return { issues: verdict.kind === 'valid' ? [] : dedupe(verdict.errors.map(toIssue)), value: verdict.value };
  };
}

const MAX_STRUCTURAL = 200;

function structuralOnly(schema: Record<string, unknown>): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const parts: Record<string, unknown> = {};
  // Only object-typed properties check anything here; at most MAX_STRUCTURAL of them keep this compile cheap.
  let kept = 0;
  for (const k in props) {
    const v = Object.hasOwn(props, k) ? props[k] : undefined;
    if (v && v.type === 'object' && kept++ >= MAX_STRUCTURAL) break;
    if (v && v.type === 'object') parts[k] = { type: 'object', required: Array.isArray(v.required) ? v.required.slice(0, MAX_STRUCTURAL) : [] };
  }
  return { type: 'object', properties: parts, required: schema.required ?? [] };
}

function toIssue(e: ErrorObject): ValidationIssue {
  const loc: (string | number)[] = ['body', ...e.instancePath.split('/').slice(1).map(unescapePointer)];
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { loc: [...loc, String(p.missingProperty)], msg: 'Field required', type: 'missing' };
    case 'type': {
      const t = Array.isArray(p.type) ? p.type.join(' or ') : String(p.type);
      const name = { string: 'string_type', integer: 'int_type', number: 'float_type', boolean: 'bool_type', object: 'dict_type', array: 'list_type', null: 'none_required' }[t];
      const msg = { string: 'Input should be a valid string', integer: 'Input should be a valid integer', number: 'Input should be a valid number', boolean: 'Input should be a valid boolean', object: 'Input should be a valid dictionary', array: 'Input should be a valid list', null: 'Input should be None' }[t];
      return { loc, msg: msg ?? `Input should be of type ${t}`, type: name ?? 'value_error' };
    }
    case 'enum':
      return { loc, msg: `Input should be ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`, type: 'enum' };
    case 'const':
      return { loc, msg: `Input should be ${JSON.stringify(p.allowedValue)}`, type: 'literal_error' };
    case 'additionalProperties':
      return { loc: [...loc, String(p.additionalProperty)], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    case 'minimum':
    case 'exclusiveMinimum':
      return { loc, msg: `Input should be greater than${e.keyword === 'minimum' ? ' or equal to' : ''} ${p.limit}`, type: e.keyword === 'minimum' ? 'greater_than_equal' : 'greater_than' };
    case 'maximum':
    case 'exclusiveMaximum':
      return { loc, msg: `Input should be less than${e.keyword === 'maximum' ? ' or equal to' : ''} ${p.limit}`, type: e.keyword === 'maximum' ? 'less_than_equal' : 'less_than' };
    case 'minLength':
      return { loc, msg: `String should have at least ${p.limit} characters`, type: 'string_too_short' };
    case 'maxLength':
      return { loc, msg: `String should have at most ${p.limit} characters`, type: 'string_too_long' };
    case 'pattern':
      return { loc, msg: `String should match pattern '${p.pattern}'`, type: 'string_pattern_mismatch' };
    case 'minItems':
      return { loc, msg: `List should have at least ${p.limit} items after validation`, type: 'too_short' };
    case 'maxItems':
      return { loc, msg: `List should have at most ${p.limit} items after validation`, type: 'too_long' };
    default:
      return { loc, msg: `Value error, ${e.message ?? 'invalid value'}`, type: 'value_error' };
  }
}

function unescapePointer(seg: string): string | number {
  const s = seg.replace(/~1/g, '/').replace(/~0/g, '~');
  return /^\d+$/.test(s) ? Number(s) : s;
}

/** anyOf/oneOf branches each report; one line per place and kind is what a caller can act on. */
function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = JSON.stringify([i.loc, i.type]);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
