import { createHash, createHmac } from 'node:crypto';
import { readBytesBounded } from '../net/bounded-response.js';
import { BlobStoreTimeout, BlobTooLarge } from './blob-store-errors.js';
import type { BlobStore } from './blob-store.types.js';

export interface S3Settings {
  /** e.g. https://s3.eu-west-1.amazonaws.com or http://minio:9000; default: AWS for the region. */
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Deadline of one request, its answer's body included (AGENTRY_S3_TIMEOUT_MS). */
  timeoutMs: number;
  /** Most bytes a GET reads into memory: more than any stored file can have. */
  maxObjectBytes: number;
}

/** How much of an error answer's body goes into the error (S3 explains a refusal in a short XML document). */
const ERROR_BODY_BYTES = 500;

const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface SignInput {
  method: string;
  url: URL;
  /** Headers to sign (lower-case names); `host` and `x-amz-date` are added. */
  headers: Record<string, string>;
  payloadHash: string;
  service: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  date: Date;
}

/** AWS Signature Version 4: returns the headers to send (the given ones, host, x-amz-date and authorization). */
export function signV4(input: SignInput): Record<string, string> {
  const amzDate = input.date.toISOString().replace(/[:-]|\.\d{3}/g, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = { ...input.headers, host: input.url.host, 'x-amz-date': amzDate };
  const names = Object.keys(headers).map((h) => h.toLowerCase()).sort();
  const canonicalHeaders = names.map((n) => `${n}:${String(headers[n]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const query = [...input.url.searchParams.entries()]
    .map(([k, v]) => [encode(k), encode(v)])
    .sort(([a, x], [b, y]) => (a === b ? (x! < y! ? -1 : 1) : a! < b! ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalRequest = [input.method, input.url.pathname, query, canonicalHeaders, signedHeaders, input.payloadHash].join('\n');
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${input.secretAccessKey}`, day);
  for (const part of [input.region, input.service, 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  return {
    ...headers,
    authorization: `AWS4-HMAC-SHA256 Credential=${input.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

/**
 * S3-compatible storage (AWS S3, MinIO, R2, ...) over signed fetch requests, path-style addressing
 * (`{endpoint}/{bucket}/{key}`), which every compatible server supports. Every request has a deadline that covers its
 * answer's body too, and nothing an endpoint sends is read beyond a bound: a stalled or misbehaving endpoint fails the
 * call (BlobStoreTimeout, BlobTooLarge) instead of holding an upload, a download, a delete or the file sweep forever.
 */
export class S3BlobStore implements BlobStore {
  private readonly base: string;

  constructor(
    private readonly s3: S3Settings,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.base = (s3.endpoint ?? `https://s3.${s3.region}.amazonaws.com`).replace(/\/+$/, '');
  }

  /** One signed request; `read` consumes the answer within the same deadline. */
  private async send<T>(method: string, key: string, read: (r: Response) => Promise<T>, body?: Uint8Array, contentType?: string): Promise<T> {
    const url = new URL(`${this.base}/${encode(this.s3.bucket)}/${key.split('/').map(encode).join('/')}`);
    const payloadHash = sha256Hex(body ?? '');
    const headers = signV4({
      method,
      url,
      headers: { 'x-amz-content-sha256': payloadHash, ...(contentType ? { 'content-type': contentType } : {}) },
      payloadHash,
      service: 's3',
      region: this.s3.region,
      accessKeyId: this.s3.accessKeyId,
      secretAccessKey: this.s3.secretAccessKey,
      date: new Date(),
    });
    // fetch sets Host itself from the URL, which is what was signed.
    delete headers.host;
    const signal = AbortSignal.timeout(this.s3.timeoutMs);
    try {
      const r = await this.fetchImpl(url, { method, headers, body: body ? new Uint8Array(body) : undefined, signal });
      return await read(r);
    } catch (e) {
      if (signal.aborted) throw new BlobStoreTimeout(`S3 ${method} ${key}: no answer within ${this.s3.timeoutMs} ms`, { cause: e });
      throw e;
    }
  }

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    await this.send(
      'PUT',
      key,
      async (r) => {
        if (!r.ok) throw new Error(`S3 PUT ${key} failed: ${r.status} ${await errorText(r)}`);
        await r.body?.cancel();
      },
      bytes,
      contentType,
    );
  }

  async get(key: string): Promise<Buffer | undefined> {
    return this.send('GET', key, async (r) => {
      if (r.status === 404) {
        await r.body?.cancel();
        return undefined;
      }
      if (!r.ok) throw new Error(`S3 GET ${key} failed: ${r.status} ${await errorText(r)}`);
      const limit = this.s3.maxObjectBytes;
      const tooLarge = () => new BlobTooLarge(`S3 GET ${key}: the object is larger than ${limit} bytes, more than any stored file`);
      // A declared length over the limit is refused before a byte is read; an undeclared one is counted as it comes.
      if (Number(r.headers.get('content-length') ?? 0) > limit) {
        await r.body?.cancel();
        throw tooLarge();
      }
      return readBytesBounded(r, limit, tooLarge);
    });
  }

  async delete(key: string): Promise<void> {
    await this.send('DELETE', key, async (r) => {
      if (!r.ok && r.status !== 404) throw new Error(`S3 DELETE ${key} failed: ${r.status} ${await errorText(r)}`);
      await r.body?.cancel();
    });
  }
}

/** The start of an error answer, for the log; the rest is not read. */
async function errorText(r: Response): Promise<string> {
  try {
    return (await readBytesBounded(r, ERROR_BODY_BYTES, undefined)).toString('utf8');
  } catch {
    return '';
  }
}
