import type { ValidationIssue } from '../errors.js';

const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);

/**
 * A boolean given as text, as webhook parameters and upload forms take it: `true/false/1/0/yes/no` in any case
 * (a JSON boolean or number as well). `undefined` when the value says neither.
 */
export function parseTextBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim().toLowerCase() : undefined;
  if (s !== undefined && TRUE.has(s)) return true;
  if (s !== undefined && FALSE.has(s)) return false;
  return undefined;
}

/** The 422 issue of a value parseTextBool could not read (Pydantic's wording). */
export function boolParsingIssue(loc: (string | number)[]): ValidationIssue {
  return { loc, msg: 'Input should be a valid boolean, unable to interpret input', type: 'bool_parsing' };
}
