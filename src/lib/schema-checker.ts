import type { ErrorObject } from 'ajv';
import { AppError } from '../errors.js';
import { schemaSizeProblem } from './schema-limits.js';
import { ThreadPool } from './thread-pool.js';

/**
 * Tenant JSON Schemas (custom-function input schemas, connector operation inputs, output schemas, tool arguments)
 * are compiled and run on a worker thread (schema-check.worker.ts), never on the event loop: compiling a schema of
 * ~2,000 nodes took 200-900 ms here, which a caller could repeat with every new schema. The thread pool bounds each
 * job (deadline, heap) and shares the thread between organizations in turn. Size and depth are checked first, on
 * this thread, by an iterative walk (schema-limits.ts).
 */

/** How a caller's schemas are read (see FLAVOURS in the worker). */
export type SchemaFlavour = 'arguments' | 'payload' | 'hint';

export type SchemaCheckRequest = { flavour: SchemaFlavour; schemaText: string; value?: unknown };
export type SchemaCheckReply =
  | { kind: 'valid'; value?: unknown }
  | { kind: 'invalid'; errors: ErrorObject[]; value: unknown }
  | { kind: 'unusable'; reason: string };

/**
 * `valid` / `invalid`: the value against the schema (`value` is the value as validated: the payload flavour coerces
 * scalars). `unusable`: the schema could not be used (does not compile, too large, too slow, the thread failed).
 */
export type SchemaVerdict =
  | { kind: 'valid'; value: unknown }
  | { kind: 'invalid'; errors: ErrorObject[]; value: unknown }
  | { kind: 'unusable'; reason: string };

export interface SchemaCheckerOptions {
  threads: number;
  /** Wall-clock time of one job (compile and validate) before its thread is terminated. */
  timeoutMs: number;
  /** V8 heap of a thread. */
  heapMb: number;
  /** Jobs one organization may have waiting; beyond, its new ones are `unusable` at once. */
  queuePerOrg: number;
}

export const DEFAULT_SCHEMA_CHECKER: SchemaCheckerOptions = { threads: 1, timeoutMs: 5_000, heapMb: 256, queuePerOrg: 200 };

export class SchemaChecker {
  private readonly pool: ThreadPool<SchemaCheckRequest, SchemaCheckReply>;

  constructor(opts: Partial<SchemaCheckerOptions> = {}) {
    const o = { ...DEFAULT_SCHEMA_CHECKER, ...opts };
    this.pool = new ThreadPool({
      base: import.meta.url,
      module: './schema-check.worker',
      doing: 'checking the schema',
      threads: o.threads,
      timeoutMs: o.timeoutMs,
      heapMb: o.heapMb,
      queuePerOwner: o.queuePerOrg,
    });
  }

  /** Whether `schema` compiles in this flavour (`valid`) or why not (`unusable`). */
  compiles(owner: string, flavour: SchemaFlavour, schema: unknown): Promise<SchemaVerdict> {
    return this.submit(owner, flavour, schema, false);
  }

  /** `value` against `schema`. Never throws: a schema that cannot be used is an `unusable` verdict. */
  validate(owner: string, flavour: SchemaFlavour, schema: unknown, value: unknown): Promise<SchemaVerdict> {
    return this.submit(owner, flavour, schema, true, value);
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private async submit(owner: string, flavour: SchemaFlavour, schema: unknown, withValue: boolean, value?: unknown): Promise<SchemaVerdict> {
    const tooLarge = schemaSizeProblem(schema);
    if (tooLarge) return { kind: 'unusable', reason: tooLarge };
    let schemaText: string;
    try {
      schemaText = JSON.stringify(schema);
    } catch (e) {
      return { kind: 'unusable', reason: `the schema is not JSON: ${(e as Error).message}` };
    }
    const out = await this.pool.run(owner, withValue ? { flavour, schemaText, value } : { flavour, schemaText });
    if (!out.ok) return { kind: 'unusable', reason: out.reason };
    const reply = out.value;
    if (reply.kind === 'unusable') return { kind: 'unusable', reason: String(reply.reason) };
    if (reply.kind === 'invalid') return { kind: 'invalid', errors: Array.isArray(reply.errors) ? reply.errors : [], value: reply.value };
    return { kind: 'valid', value: 'value' in reply ? reply.value : value };
  }
}

/**
 * Refuses (422 at `loc`) an `output_schema` (agent, invocation, schedule) the run could not enforce: compiled in the
 * flavour the run checks answers with. The run treats a schema it cannot use as a hint only, so one that does not
 * compile (a misspelt type, a reference that resolves nowhere), or is too large, is refused where it is written
 * instead of being stored and silently not enforced.
 */
export type OutputSchemaCheck = (organizationId: string, schema: Record<string, unknown>, loc: (string | number)[]) => Promise<void>;

export function outputSchemaCheck(checker: Pick<SchemaChecker, 'compiles'>): OutputSchemaCheck {
  return async (owner, schema, loc) => {
    const verdict = await checker.compiles(owner, 'hint', schema);
    if (verdict.kind === 'unusable') throw AppError.invalid(loc, `output_schema cannot be enforced: ${verdict.reason}`);
  };
}
