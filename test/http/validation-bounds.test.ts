import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { zodIssuesToDetail } from '../../src/http/validation.js';

/** The 422 detail of a bound, in Pydantic's words: strings count characters, lists items, numbers compare. */
describe('zodIssuesToDetail: lower and upper bounds', () => {
  const detail = (schema: z.ZodType, input: unknown) => {
    const r = schema.safeParse(input, { reportInput: true });
    if (r.success) throw new Error('expected a validation error');
    return zodIssuesToDetail(r.error.issues, ['body', 'f']);
  };
  const cases: [string, z.ZodType, unknown, string, string][] = [
    ['string min', z.string().min(2), 'a', 'String should have at least 2 characters', 'string_too_short'],
    ['string max', z.string().max(1), 'ab', 'String should have at most 1 character', 'string_too_long'],
    ['list min', z.array(z.number()).min(1), [], 'List should have at least 1 item after validation', 'too_short'],
    ['list max', z.array(z.number()).max(2), [1, 2, 3], 'List should have at most 2 items after validation', 'too_long'],
    ['number gt', z.number().gt(0), 0, 'Input should be greater than 0', 'greater_than'],
    ['number gte', z.number().min(1), 0, 'Input should be greater than or equal to 1', 'greater_than_equal'],
    ['number lt', z.number().lt(5), 5, 'Input should be less than 5', 'less_than'],
    ['number lte', z.number().max(50), 51, 'Input should be less than or equal to 50', 'less_than_equal'],
  ];
  for (const [name, schema, input, msg, type] of cases) {
    it(name, () => {
      // The rejected value is never echoed (it may be a credential).
      expect(detail(schema, input)).toEqual([{ loc: ['body', 'f'], msg, type }]);
    });
  }
});
