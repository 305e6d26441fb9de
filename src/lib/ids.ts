import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/** UUIDv7: time-ordered, so primary keys insert at the end of the index and sort by creation. */
export function newId(): string {
  return uuidv7();
}

/** URL-safe random token with `bytes` of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
