import { Ajv, type ValidateFunction } from 'ajv';
import { lenientRegExp } from '../lib/safe-regexp.js';
import { schemaSizeProblem } from '../lib/schema-limits.js';

/**
 * JSON answers (output_format `json`): parsing a model's answer leniently (code fences, prose around the value)
 * and validating it against output_schema. The problems found are phrased for the model, which gets them back in a
 * corrective turn.
 */

export type JsonParse = { ok: true; value: unknown } | { ok: false; error: string };

export function parseJsonAnswer(answer: string): JsonParse {
  let s = answer.trim();
  const fenced = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(s);
  if (fenced) s = fenced[1].trim();
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    // Models sometimes wrap the value in a sentence: take the outermost object or array.
    const start = s.search(/[[{]/);
    const end = Math.max(s.lastIndexOf('}'), s.lastIndexOf(']'));
    if (start >= 0 && end > start) {
      try {
        return { ok: true, value: JSON.parse(s.slice(start, end + 1)) };
      } catch {
        // fall through
      }
    }
    return { ok: false, error: 'the answer is not valid JSON' };
  }
}

export class JsonSchemaValidator {
  // Patterns run on RE2 (linear time); one RE2 cannot run is not enforced, as a schema that does not compile is not.
  private readonly ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, code: { regExp: lenientRegExp } });
  private readonly cache = new Map<string, ValidateFunction | null>();

  /**
   * Problems of `value` against `schema` (empty when it validates). A schema Ajv cannot compile is not held
   * against the answer: the agent owner's schema is then only a hint to the model.
   */
  validate(schema: Record<string, unknown>, value: unknown): string[] {
    if (schemaSizeProblem(schema)) return [];
    const key = JSON.stringify(schema);
    let fn = this.cache.get(key);
    if (fn === undefined) {
      try {
        fn = this.ajv.compile(schema);
      } catch {
        fn = null;
      }
      if (this.cache.size > 200) this.cache.clear();
      this.cache.set(key, fn);
    }
    if (!fn || fn(value)) return [];
    return (fn.errors ?? []).slice(0, 20).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
  }
}
