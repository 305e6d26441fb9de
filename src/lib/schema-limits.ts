/**
 * Bounds on a tenant's JSON Schema before Ajv compiles it. Ajv compiles recursively and generates code for every
 * node on the main thread: a schema nested 1,000 levels deep overflows the stack, and ~2,000 nodes already take close
 * to a second here. The walk below is iterative and stops at the first limit it passes, so checking is cheap
 * whatever the schema.
 */

export interface SchemaLimits {
  /** Nested objects and arrays, counted from the root. */
  maxDepth: number;
  /** Objects and arrays in the whole schema. */
  maxNodes: number;
}

export const DEFAULT_SCHEMA_LIMITS: SchemaLimits = { maxDepth: 64, maxNodes: 2_000 };

/** Why `schema` is too large to compile, or undefined when it is within `limits`. */
export function schemaSizeProblem(schema: unknown, limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS): string | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  // Counted when found, not when visited, and keys are walked lazily: an object with 100k keys stops the walk after
  // the first few thousand instead of being listed whole.
  const stack: [object, number][] = [[schema, 1]];
  let nodes = 1;
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (depth > limits.maxDepth) return `the schema is nested more than ${limits.maxDepth} levels deep`;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const child = (value as Record<string, unknown>)[key];
      if (child === null || typeof child !== 'object') continue;
      if (++nodes > limits.maxNodes) return `the schema has more than ${limits.maxNodes} objects and arrays`;
      stack.push([child, depth + 1]);
    }
  }
  return undefined;
}
