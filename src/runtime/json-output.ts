import type { SchemaChecker } from '../lib/schema-checker.js';

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

/**
 * output_schema and tool input schemas, checked by the schema checker off the main thread ('hint' flavour: patterns
 * on RE2, one RE2 cannot run not enforced). A schema that cannot be used (does not compile, too large, too slow) is
 * not held against the answer: the schema is then only a hint to the model.
 */
export class JsonSchemaValidator {
  constructor(
    private readonly checker: SchemaChecker,
    private readonly owner: string,
  ) {}

  /** Problems of `value` against `schema`, phrased for the model (empty when it validates). */
  async validate(schema: Record<string, unknown>, value: unknown): Promise<string[]> {
    const verdict = await this.checker.validate(this.owner, 'hint', schema, value);
    if (verdict.kind !== 'invalid') return [];
    return verdict.errors.slice(0, 20).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
  }
}
