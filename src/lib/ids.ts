import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562): time-ordered, so primary keys insert at the end of the index and sort by creation.
 *
 * Layout as the `uuid` package makes them (method 1 of RFC 9562 section 6.2): 48 bits of Unix milliseconds, then a
 * 32-bit counter spread over the version and variant fields that starts at a random value each millisecond and
 * counts up within it (on overflow the millisecond is advanced), then 10 random bits. Ids of this process are
 * therefore strictly increasing, even within one millisecond.
 *
 * Written here rather than taken from `uuid` because every accepted webhook call makes one: `uuid` refills a
 * 256-byte random pool every 16 ids (a `randomFillSync` call each time, ~6% of the accept's CPU); this pool lasts
 * 512 ids.
 */
export function newId(): string {
  const now = Date.now();
  if (now > state.msecs) {
    const r = random(4);
    state.seq = ((pool[r]! << 23) | (pool[r + 1]! << 16) | (pool[r + 2]! << 8) | pool[r + 3]!) >>> 0;
    state.msecs = now;
  } else {
    state.seq = (state.seq + 1) >>> 0;
    if (state.seq === 0) state.msecs++;
  }
  const { msecs, seq } = state;
  const r = random(6);
  return (
    timePrefix(msecs) +
    hex8(0x70 | ((seq >>> 28) & 0x0f)) +
    hex8((seq >>> 20) & 0xff) +
    '-' +
    hex8(0x80 | ((seq >>> 14) & 0x3f)) +
    hex8((seq >>> 6) & 0xff) +
    '-' +
    hex8(((seq << 2) & 0xff) | (pool[r]! & 0x03)) +
    hex8(pool[r + 1]!) +
    hex8(pool[r + 2]!) +
    hex8(pool[r + 3]!) +
    hex8(pool[r + 4]!) +
    hex8(pool[r + 5]!)
  );
}

/** The id's first 14 characters (the millisecond), written once per millisecond: ids of one share them. */
function timePrefix(msecs: number): string {
  if (msecs !== prefix.msecs) {
    prefix.text =
      hex8((msecs / 0x10000000000) & 0xff) +
      hex8((msecs / 0x100000000) & 0xff) +
      hex8((msecs / 0x1000000) & 0xff) +
      hex8((msecs / 0x10000) & 0xff) +
      '-' +
      hex8((msecs / 0x100) & 0xff) +
      hex8(msecs & 0xff) +
      '-';
    prefix.msecs = msecs;
  }
  return prefix.text;
}

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let poolAt = POOL_BYTES;
const state = { msecs: -Infinity, seq: 0 };
const prefix = { msecs: Number.NaN, text: '' };
const HEX = Array.from({ length: 256 }, (_, i) => (i + 0x100).toString(16).slice(1));
const hex8 = (b: number): string => HEX[b]!;

/** The offset of `n` fresh random bytes in `pool`. */
function random(n: number): number {
  if (poolAt + n > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += n;
  return at;
}

/** URL-safe random token with `bytes` of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
