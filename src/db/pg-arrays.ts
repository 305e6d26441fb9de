/**
 * Array parameters for PostgreSQL in its binary format (`unnest($1::text[], ...)` of a batch statement; embeddings,
 * `$1::real[]`, src/db/cosine-order.ts).
 *
 * pg sends a JavaScript array as a text literal: every element is escaped by a regex replace and the literal is
 * built by string concatenation, and PostgreSQL then parses and unescapes it again. For a batch of run outcomes,
 * whose trace events are JSON texts full of quotes, that was ~3% of the service's CPU per synchronous run. In the
 * binary format each element is its length and its UTF-8 bytes: measured on 32 trace events per statement,
 * PostgreSQL's CPU -35% and the client's -45% (scratch harness, the two forms alternated).
 *
 * What PostgreSQL stores is the same as from the text form: strings are encoded as UTF-8 the way pg encodes any text
 * parameter (a lone surrogate becomes U+FFFD), a NUL is refused by PostgreSQL as before, null elements are NULL.
 * The element type is checked by PostgreSQL against the parameter's cast (`::text[]`, `::bigint[]`, `::int[]`,
 * `::real[]`): a mismatch is an error, never a silent conversion.
 */

const HEADER = 20;
const OID = { int4: 23, int8: 20, text: 25, float4: 700, float8: 701 } as const;

function header(b: Buffer, length: number, hasNull: boolean, oid: number): void {
  b.writeInt32BE(1, 0); // dimensions
  b.writeInt32BE(hasNull ? 1 : 0, 4);
  b.writeInt32BE(oid, 8);
  b.writeInt32BE(length, 12);
  b.writeInt32BE(1, 16); // lower bound
}

/** `text[]`: null and undefined are NULL; other non-strings are sent as String(value). */
export function pgTextArray(values: readonly unknown[]): Buffer {
  const texts = values.map((v) => (v == null ? null : typeof v === 'string' ? v : String(v)));
  const lengths = texts.map((t) => (t === null ? -1 : Buffer.byteLength(t)));
  let size = HEADER;
  for (const l of lengths) size += 4 + Math.max(0, l);
  const b = Buffer.allocUnsafe(size);
  header(b, texts.length, lengths.includes(-1), OID.text);
  let at = HEADER;
  for (let i = 0; i < texts.length; i++) {
    const l = lengths[i]!;
    b.writeInt32BE(l, at);
    at += 4;
    if (l > 0) at += b.write(texts[i]!, at);
  }
  return b;
}

/**
 * `real[]` (float4) from numbers, each rounded to the nearest float4 as `Math.fround` does (what PostgreSQL's text
 * input gives for the same JSON number, but for the rare decimal that lies on a float4 midpoint once read as a
 * float8). No NULL elements: a vector has none. 4 bytes a number against ~20 characters of text to build and parse.
 */
export function pgFloat4Array(values: readonly number[]): Buffer {
  return floats(values, 4, OID.float4, (b, v, at) => b.writeFloatBE(v, at));
}

/** `float8[]` from numbers, exactly; no NULL elements. */
export function pgFloat8Array(values: readonly number[]): Buffer {
  return floats(values, 8, OID.float8, (b, v, at) => b.writeDoubleBE(v, at));
}

function floats(values: readonly number[], width: number, oid: number, write: (b: Buffer, v: number, at: number) => void): Buffer {
  const b = Buffer.allocUnsafe(HEADER + values.length * (4 + width));
  header(b, values.length, false, oid);
  let at = HEADER;
  for (const v of values) {
    b.writeInt32BE(width, at);
    write(b, v, at + 4);
    at += 4 + width;
  }
  return b;
}

/** `bigint[]` from integers (numbers, or decimal strings as pg returns bigint columns); null and undefined are NULL. */
export function pgBigintArray(values: readonly unknown[]): Buffer {
  return integers(values, 8, OID.int8, writeInt64);
}

const TWO_32 = 2 ** 32;

/**
 * A safe integer is written as its two 32-bit halves: a BigInt per element was most of what a batch statement
 * allocated. Anything else (a decimal string, as pg returns bigint columns) goes through BigInt, which refuses
 * what is not an integer.
 */
function writeInt64(b: Buffer, v: unknown, at: number): void {
  if (typeof v === 'number' && Number.isSafeInteger(v)) {
    const high = Math.floor(v / TWO_32);
    b.writeInt32BE(high, at);
    b.writeUInt32BE(v - high * TWO_32, at + 4);
  } else {
    b.writeBigInt64BE(BigInt(v as number | string), at);
  }
}

/** `int[]` (int4) from integers; null and undefined are NULL. */
export function pgIntArray(values: readonly unknown[]): Buffer {
  return integers(values, 4, OID.int4, (b, v, at) => b.writeInt32BE(Number(v), at));
}

function integers(values: readonly unknown[], width: number, oid: number, write: (b: Buffer, v: unknown, at: number) => void): Buffer {
  let nulls = 0;
  for (const v of values) if (v == null) nulls++;
  const b = Buffer.allocUnsafe(HEADER + values.length * 4 + (values.length - nulls) * width);
  header(b, values.length, nulls > 0, oid);
  let at = HEADER;
  for (const v of values) {
    if (v == null) {
      b.writeInt32BE(-1, at);
      at += 4;
      continue;
    }
    b.writeInt32BE(width, at);
    write(b, v, at + 4);
    at += 4 + width;
  }
  return b;
}
