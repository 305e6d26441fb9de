import type { z } from 'zod';
import type { ValidationIssue } from '../errors.js';

/**
 * Maps zod issues to the Pydantic v2 error list the xpander API answers with:
 * `{loc, msg, type}` where `type` is a Pydantic error type name.
 */

const TYPE_NAMES: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  bigint: ['int_type', 'Input should be a valid integer'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['dict_type', 'Input should be a valid dictionary'],
  record: ['dict_type', 'Input should be a valid dictionary'],
  array: ['list_type', 'Input should be a valid list'],
  tuple: ['tuple_type', 'Input should be a valid tuple'],
  date: ['datetime_type', 'Input should be a valid datetime'],
  null: ['none_required', 'Input should be None'],
};

const quote = (v: unknown) => (typeof v === 'string' ? `'${v}'` : String(v));
const orList = (vals: unknown[]) =>
  vals.length <= 1 ? vals.map(quote).join('') : `${vals.slice(0, -1).map(quote).join(', ')} or ${quote(vals[vals.length - 1])}`;

function plural(n: number | bigint, word: string): string {
  return `${n} ${word}${Number(n) === 1 ? '' : 's'}`;
}

/** Pydantic's words for a lower and an upper bound: strings count characters, lists items, numbers compare. */
const BOUND_WORDS = {
  too_small: { count: 'at least', length: 'short', compare: 'greater' },
  too_big: { count: 'at most', length: 'long', compare: 'less' },
} as const;

function boundIssue(w: (typeof BOUND_WORDS)[keyof typeof BOUND_WORDS], bound: number | bigint, origin: string, inclusive: boolean | undefined): { msg: string; type: string } {
  if (origin === 'string') return { msg: `String should have ${w.count} ${plural(bound, 'character')}`, type: `string_too_${w.length}` };
  if (origin === 'array' || origin === 'set') return { msg: `List should have ${w.count} ${plural(bound, 'item')} after validation`, type: `too_${w.length}` };
  if (inclusive === false) return { msg: `Input should be ${w.compare} than ${bound}`, type: `${w.compare}_than` };
  return { msg: `Input should be ${w.compare} than or equal to ${bound}`, type: `${w.compare}_than_equal` };
}

export function zodIssuesToDetail(issues: readonly z.core.$ZodIssue[], prefix: (string | number)[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const issue of issues) {
    const loc = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    const input = (issue as { input?: unknown }).input;
    switch (issue.code) {
      case 'invalid_type': {
        if ((issue as { received?: string }).received === 'NaN') {
          // Text that does not parse as a number, from a query or path value (z.coerce): every coerced field of
          // this API is an integer, which Pydantic reports as int_parsing.
          out.push({ loc, msg: 'Input should be a valid integer, unable to parse string as an integer', type: 'int_parsing' });
        } else if (input === undefined) {
          out.push({ loc, msg: 'Field required', type: 'missing' });
        } else {
          const [type, msg] = TYPE_NAMES[issue.expected] ?? ['value_error', issue.message];
          out.push({ loc, msg, type, input });
        }
        break;
      }
      case 'unrecognized_keys':
        for (const key of issue.keys) out.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
        break;
      case 'invalid_value': {
        const values = issue.values as unknown[];
        const type = values.length === 1 ? 'literal_error' : 'enum';
        out.push({ loc, msg: `Input should be ${orList(values)}`, type, input, ctx: { expected: orList(values) } });
        break;
      }
      case 'too_small':
        out.push({ loc, ...boundIssue(BOUND_WORDS.too_small, issue.minimum, issue.origin, issue.inclusive), input });
        break;
      case 'too_big':
        out.push({ loc, ...boundIssue(BOUND_WORDS.too_big, issue.maximum, issue.origin, issue.inclusive), input });
        break;
      case 'invalid_format': {
        if (issue.format === 'url') out.push({ loc, msg: 'Input should be a valid URL', type: 'url_parsing', input });
        else if (issue.format === 'regex') out.push({ loc, msg: `String should match pattern '${(issue as { pattern?: string }).pattern ?? ''}'`, type: 'string_pattern_mismatch', input });
        else if (issue.format === 'uuid') out.push({ loc, msg: 'Input should be a valid UUID', type: 'uuid_parsing', input });
        else out.push({ loc, msg: `Value error, invalid ${issue.format}`, type: 'value_error', input });
        break;
      }
      case 'invalid_union': {
        const disc = (issue as { discriminator?: string }).discriminator;
        if (disc) {
          const tag = input && typeof input === 'object' ? (input as Record<string, unknown>)[disc] : undefined;
          // zod 4.6 already ends the path with the discriminator; older releases did not.
          const discLoc = loc[loc.length - 1] === disc ? loc : [...loc, disc];
          if (tag === undefined) out.push({ loc: discLoc, msg: 'Field required', type: 'missing' });
          else
            out.push({
              loc: discLoc,
              msg: `Input tag ${quote(tag)} found using '${disc}' does not match any of the expected tags`,
              type: 'union_tag_invalid',
              input: tag,
            });
        } else if (issue.errors.length > 0) {
          // Report the branch that got furthest (fewest issues): the most useful message for the caller.
          const best = [...issue.errors].sort((a, b) => a.length - b.length)[0];
          out.push(...zodIssuesToDetail(best, loc));
        } else out.push({ loc, msg: 'Input does not match any allowed form', type: 'union_error', input });
        break;
      }
      case 'custom':
        // A check that names its own Pydantic type (e.g. router.ts qs.bool: bool_parsing) says its message as is.
        if (typeof issue.params?.type === 'string') out.push({ loc, msg: issue.message, type: issue.params.type, input });
        else out.push({ loc, msg: `Value error, ${issue.message}`, type: 'value_error', input });
        break;
      default:
        out.push({ loc, msg: issue.message, type: 'value_error', input });
    }
  }
  // `input` is never echoed: a rejected value may be a credential.
  return out.map((i) => ({ loc: i.loc, msg: i.msg, type: i.type, ...(i.ctx ? { ctx: i.ctx } : {}) }));
}
