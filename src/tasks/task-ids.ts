/**
 * Task ids are chosen by callers (a chat id works) or generated. "Printable" excludes control characters
 * (C0, DEL, C1), lone surrogates and the Unicode line/paragraph separators, which would break logs and SSE framing.
 * Every entry point (API invoke, webhooks) should validate with this one function.
 */
const PRINTABLE = /^[^\p{Cc}\p{Cs}\u2028\u2029]{1,128}$/u;

export function isValidTaskId(id: string): boolean {
  return PRINTABLE.test(id) && id.trim().length > 0 && [...id].length <= 128;
}

export const TASK_ID_RULE = 'task id must be 1 to 128 printable characters';
