import { RE2JS } from 're2js';

/**
 * Regular expressions written by tenants (JSON Schema `pattern` and `patternProperties` in custom-function input
 * schemas, agent output schemas and imported connector documents) run on the main thread, where one backtracking
 * pattern (`^(a+)+$` against 32 `a`s and `!`: 23.6 s) froze the API, webhooks and worker together. They run here on
 * RE2 (re2js), whose matching time is linear in the input whatever the pattern.
 *
 * RE2 has no lookaround and no backreferences: those are exactly the features that need backtracking. Such a
 * pattern is never handed to the backtracking engine: `strictRegExp` refuses it (the schema does not compile, which
 * the caller reports), `lenientRegExp` returns a matcher that accepts everything (the pattern is not enforced, the
 * rest of the schema still is).
 */

/** The shape Ajv's `code.regExp` option expects (Ajv's RegExpEngine). */
export interface RegExpEngine {
  (pattern: string, flags: string): { test(s: string): boolean };
  code: string;
}

export class UnsupportedPatternError extends Error {}

class SafePattern {
  constructor(
    private readonly source: string,
    private readonly re: RE2JS | undefined,
  ) {}

  /** JSON Schema patterns are unanchored searches, like RegExp#test. */
  test(s: string): boolean {
    return this.re ? this.re.matcher(s).find() : true;
  }

  /** Ajv keys its compiled pattern table by this text: it must differ between patterns. */
  toString(): string {
    return `/${this.source}/re2${this.re ? '' : '-unenforced'}`;
  }
}

/** Compiles an ECMAScript pattern on RE2; throws UnsupportedPatternError when RE2 cannot express it. */
export function compileSafePattern(pattern: string): { test(s: string): boolean } {
  return new SafePattern(pattern, re2(pattern));
}

function re2(pattern: string): RE2JS {
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (e) {
    throw new UnsupportedPatternError(
      `pattern ${JSON.stringify(pattern.slice(0, 200))} is not supported (lookaround and backreferences are not allowed): ${(e as Error).message.slice(0, 200)}`,
    );
  }
}

/** Ajv engine that refuses patterns RE2 cannot run: `ajv.compile` throws, naming the pattern. */
export const strictRegExp: RegExpEngine = Object.assign((pattern: string) => compileSafePattern(pattern), {
  // Only read when Ajv generates standalone code, which this service never does.
  code: 'strictRegExp',
});

/** Ajv engine that does not enforce patterns RE2 cannot run, instead of refusing the whole schema. */
export const lenientRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    try {
      return compileSafePattern(pattern);
    } catch {
      return new SafePattern(pattern, undefined);
    }
  },
  { code: 'lenientRegExp' },
);

/**
 * The first pattern of a tenant's JSON Schema (`pattern` values, `patternProperties` keys) that RE2 cannot run, with
 * why; undefined when every one can. Used where the schema is received, so an output_schema pattern that could not be
 * enforced is refused (422) instead of silently not applied. The walk is iterative and stops after `maxNodes`
 * objects (a schema past the size limits is not compiled at all, see schema-limits.ts).
 */
export function unsupportedPattern(schema: unknown, maxNodes = 2_000): string | undefined {
  const stack: unknown[] = [schema];
  let seen = 0;
  while (stack.length && seen++ < maxNodes) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const record = node as Record<string, unknown>;
    const patterns = [
      ...(typeof record.pattern === 'string' ? [record.pattern] : []),
      ...(record.patternProperties && typeof record.patternProperties === 'object' ? Object.keys(record.patternProperties) : []),
    ];
    for (const p of patterns) {
      try {
        compileSafePattern(p);
      } catch (e) {
        return (e as Error).message;
      }
    }
    for (const key in record) if (Object.hasOwn(record, key)) stack.push(record[key]);
  }
  return undefined;
}
