/**
 * Compiles and runs tenant JSON Schemas (custom-function input schemas, connector operation inputs, agent output
 * schemas, tool inputs) off the main thread: Ajv generates code for every node of a schema, and a large one takes
 * hundreds of milliseconds, which on the main thread would stall every request of the process. The parent
 * (schema-checker.ts, through thread-pool.ts) bounds each job with a deadline and terminates this thread when it
 * passes.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { setBounded } from './bounded-map.js';
import { lenientRegExp, strictRegExp } from './safe-regexp.js';
import { serveThread } from './thread-serve.js';
import type { SchemaCheckReply, SchemaCheckRequest, SchemaFlavour } from './schema-checker.js';

/** How each caller's schemas are read; patterns always run on RE2 (linear time). */
const FLAVOURS: Record<SchemaFlavour, Options> = {
  // Written through our API and checked when written: a pattern RE2 cannot run makes the schema invalid.
  arguments: { allErrors: true, strict: false, validateSchema: true, code: { regExp: strictRegExp } },
  // Third-party documents, any draft's keywords; text-on-the-wire scalars coerced as a lax Pydantic model would.
  payload: { strict: false, allErrors: true, coerceTypes: true, validateFormats: false, validateSchema: false, allowUnionTypes: true, code: { regExp: lenientRegExp } },
  // A hint to the model: what does not compile or cannot be enforced is not held against the answer.
  hint: { allErrors: true, strict: false, validateFormats: false, code: { regExp: lenientRegExp } },
};

const MAX_CACHED = 500;
const MAX_ERRORS = 100;
const engines = new Map<SchemaFlavour, { ajv: Ajv; cache: Map<string, ValidateFunction> }>();

function compiled(flavour: SchemaFlavour, schemaText: string): ValidateFunction {
  let engine = engines.get(flavour);
  if (!engine) {
    engine = { ajv: new Ajv(FLAVOURS[flavour]), cache: new Map() };
    engines.set(flavour, engine);
  }
  let fn = engine.cache.get(schemaText);
  if (!fn) {
    fn = engine.ajv.compile(JSON.parse(schemaText) as object);
    setBounded(engine.cache, schemaText, fn, MAX_CACHED);
  }
  return fn;
}

function check(req: SchemaCheckRequest): SchemaCheckReply {
  let fn: ValidateFunction;
  try {
    fn = compiled(req.flavour, req.schemaText);
  } catch (e) {
    return { kind: 'unusable', reason: (e as Error).message.slice(0, 1000) };
  }
  if (!('value' in req)) return { kind: 'valid' };
  // Coercion (payload flavour) changes the value in place: it goes back with the verdict.
  const value = req.value;
  if (fn(value)) return { kind: 'valid', value };
  const errors = (fn.errors ?? []).slice(0, MAX_ERRORS).map(plainError);
  return { kind: 'invalid', errors, value };
}

/** What crosses back: Ajv's fields the callers read, without the schema fragments Ajv may attach. */
function plainError(e: ErrorObject): ErrorObject {
  return { instancePath: e.instancePath, schemaPath: e.schemaPath, keyword: e.keyword, params: e.params, message: e.message };
}

// Loading Ajv and compiling a first schema (~100 ms cold) happens before the thread says it is ready: the jobs'
// deadlines start then, and this is not a schema's time.
for (const flavour of Object.keys(FLAVOURS) as SchemaFlavour[]) compiled(flavour, '{"type":"object"}');
serveThread(check);
