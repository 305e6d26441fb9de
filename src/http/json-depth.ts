import { AppError } from '../errors.js';

/**
 * Whether a JSON text nests arrays and objects deeper than `max`, in one pass over the text (brackets inside
 * strings do not count). Run before parsing: JSON.parse itself copes with deep nesting, but everything after it
 * that walks the value recursively (prototype-poisoning scan, zod, the runtime, JSON columns) would overflow the
 * stack and answer 500 (issue 20: ~4,500 levels). A text no longer than `max` cannot be deeper, so short bodies
 * cost nothing.
 */
export function jsonTooDeep(text: string, max: number): boolean {
  const n = text.length;
  if (n <= max) return false;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22) {
      // Skip the string: its end is the next quote not escaped by a backslash.
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** 422 in the shape of malformed JSON, naming the limit. */
export function jsonTooDeepError(max: number): AppError {
  return AppError.validation([{ loc: ['body'], msg: `JSON nested deeper than ${max} levels`, type: 'json_invalid' }]);
}
