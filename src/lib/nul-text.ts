import { AppError } from '../errors.js';

/**
 * NUL (U+0000) in text: PostgreSQL cannot store it in a text column, SQLite can. Text holding it is refused on
 * both databases alike, with a 422, before it reaches a queue that would otherwise retry it forever (issue 20:
 * one webhook call with a NUL in its prompt stopped the task inbox on PostgreSQL for every organization).
 */
export const NUL_MESSAGE = 'Text cannot contain NUL characters (\\u0000)';

export function nulTextError(loc: (string | number)[] = ['body']): AppError {
  return AppError.validation([{ loc, msg: NUL_MESSAGE, type: 'string_type' }]);
}

/** Whether any string value of a flat record holds a NUL (a native scan per value: negligible per row). */
export function hasNulText(values: Record<string, unknown>): boolean {
  for (const k in values) {
    const v = values[k];
    if (typeof v === 'string' && v.includes('\u0000')) return true;
  }
  return false;
}

/**
 * Text the service produced rather than received (a model's answer, a tool's result, a document's extracted text)
 * cannot be refused: its NULs become U+FFFD, the replacement character, before it is stored. Without this,
 * PostgreSQL refused the run's outcome (and the run was claimed again, calling the model and its tools again) and
 * SQLite kept the text only up to the NUL.
 */
export function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}
