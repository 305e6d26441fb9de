/**
 * Rows of libsql statements as objects built here from its raw (array) rows.
 *
 * Why: libsql's object rows are made in its native binding, which creates, hashes and defines every column's key
 * string again for every row. Counted with callgrind on a task row (43 columns, read by primary key): ~244,000
 * instructions as an object, ~150,000 as an array, and the same ~150,000 with the object then built by the function
 * below, whose object literal V8 compiles once per column list (one hidden class for every row of a statement,
 * so the code reading them stays monomorphic). A synchronous run reads its task's row once (the outcome's
 * `returning *`). The list reader's thread (sqlite-reader.worker.mjs) keeps libsql's objects: sent as arrays and
 * built here, a page of 50 task rows cost the event loop 2.5M instructions against 1.0M as objects (callgrind),
 * V8's copy of objects between threads being cheaper than a built object.
 *
 * The objects are what libsql's object mode gives: same keys in the same order (a repeated name keeps its last
 * value, as when a key is set twice), same values, except that libsql gives a blob as a Node Buffer in raw mode
 * and as an ArrayBuffer in object mode: converted back here, so no reader sees a difference.
 */
export type RowBuilder = (values: unknown[]) => Record<string, unknown>;

/** A builder for rows of these column names, compiled once per statement. */
export function rowBuilder(names: readonly string[]): RowBuilder {
  // In an object literal `"__proto__": v` sets the prototype: a column of that name (none of ours) gets plain own keys.
  if (names.includes('__proto__')) return (r) => Object.fromEntries(names.map((name, i) => [name, fromRaw(r[i])]));
  // Keys are written as JSON string literals, so a column name can be anything SQL allows and still only be a key.
  const fields = names.map((name, i) => `${JSON.stringify(name)}: (x = r[${i}], x !== null && typeof x === 'object' ? blob(x) : x)`);
  return new Function('blob', `return function row(r) { let x; return { ${fields.join(', ')} }; };`)(blobAsArrayBuffer) as RowBuilder;
}

/**
 * libsql's object mode gives blobs as ArrayBuffers; its raw mode as Buffers (maybe views of a larger one).
 */
const fromRaw = (x: unknown): unknown => (x !== null && typeof x === 'object' ? blobAsArrayBuffer(x) : x);

function blobAsArrayBuffer(v: object): unknown {
  if (!ArrayBuffer.isView(v)) return v;
  return v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength);
}
