import { createHash, createHmac } from 'node:crypto';
import type { BlobStore } from './blob-store.types.js';

export interface S3Settings {
  /** e.g. https://s3.eu-west-1.amazonaws.com or http://minio:9000; default: AWS for the region. */
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

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
 * (`{endpoint}/{bucket}/{key}`), which every compatible server supports.
 */
export class S3BlobStore implements BlobStore {
  private readonly base: string;

  constructor(
    private readonly s3: S3Settings,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.base = (s3.endpoint ?? `https://s3.${s3.region}.amazonaws.com`).replace(/\/+$/, '');
  }

  private async send(method: string, key: string, body?: Uint8Array, contentType?: string): Promise<Response> {
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
    return this.fetchImpl(url, { method, headers, body: body ? new Uint8Array(body) : undefined });
  }

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    const r = await this.send('PUT', key, bytes, contentType);
    if (!r.ok) throw new Error(`S3 PUT ${key} failed: ${r.status} ${await r.text().catch(() => '')}`.slice(0, 500));
    await r.arrayBuffer().catch(() => undefined);
  }

  async get(key: string): Promise<Buffer | undefined> {
    const r = await this.send('GET', key);
    if (r.status === 404) {
      await r.arrayBuffer().catch(() => undefined);
      return undefined;
    }
    if (!r.ok) throw new Error(`S3 GET ${key} failed: ${r.status}`);
    return Buffer.from(await r.arrayBuffer());
  }

  async delete(key: string): Promise<void> {
    const r = await this.send('DELETE', key);
    await r.arrayBuffer().catch(() => undefined);
    if (!r.ok && r.status !== 404) throw new Error(`S3 DELETE ${key} failed: ${r.status}`);
  }
}
