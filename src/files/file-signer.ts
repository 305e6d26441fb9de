import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** Presigned file URLs are valid 30 days after upload (spec section 8). */
export const PRESIGN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Signs `{organization, file, expiry}` with an HMAC key derived from the master key, so a URL is bound to its
 * organization and cannot be extended or moved to another file. Derivation keeps this key separate from the one
 * that seals secrets.
 */
export class FileSigner {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'agentry file urls v1', 32));
  }

  sign(organizationId: string, fileId: string, expiresSec: number): string {
    return createHmac('sha256', this.key).update(`${organizationId}\n${fileId}\n${expiresSec}`).digest('base64url');
  }

  verify(organizationId: string, fileId: string, expiresSec: number, sig: string): boolean {
    const expected = Buffer.from(this.sign(organizationId, fileId, expiresSec));
    const given = Buffer.from(sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
