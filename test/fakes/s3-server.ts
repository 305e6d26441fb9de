/**
 * An S3-compatible object store on 127.0.0.1 for tests: PUT, GET and DELETE of path-style objects
 * (`/{bucket}/{key}`), kept in memory. Every request must carry a valid AWS SigV4 signature for the configured
 * credentials (recomputed from the request as received) and a matching x-amz-content-sha256, else 403.
 *
 *   const s3 = await startS3Server({ accessKeyId: 'AK', secretAccessKey: 'SK', region: 'us-east-1' });
 *   s3.url; s3.objects.get('bucket/key'); s3.rejected; await s3.close();
 *   s3.failDeletes = true;   // DELETE answers 503 (a store that is down) until set back
 *   s3.stall = true;         // every request is read and never answered (a stalled endpoint) until set back
 *   s3.endlessGets = true;   // a GET of an existing object answers 200 and streams bytes until the client hangs up
 *   env: { ...s3Env(s3, creds), AGENTRY_S3_TIMEOUT_MS: '300' }   // the settings that point the service at it
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signV4 } from '../../src/files/s3-blob-store.js';

export interface FakeS3 {
  url: string;
  /** `bucket/key` -> bytes */
  objects: Map<string, Buffer>;
  /** Requests refused for a bad signature. */
  rejected: number;
  /** While true, every DELETE answers 503 and removes nothing. */
  failDeletes: boolean;
  /** While true, every request is accepted and read, and never answered. */
  stall: boolean;
  /** While true, a GET of an existing object streams bytes (no length) until the client hangs up. */
  endlessGets: boolean;
  /** Requests received (stalled ones included). */
  requests: number;
  close(): Promise<void>;
}

/** Writes `chunk` for as long as the client reads, until it hangs up. */
function streamForever(res: ServerResponse): void {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export interface S3Creds {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

/** The settings that make the service store its files in `s3` under `bucket`, signing with `creds`. */
export function s3Env(s3: Pick<FakeS3, 'url'>, creds: S3Creds, bucket = 'files'): Record<string, string> {
  return {
    AGENTRY_BLOB_STORE: 's3',
    AGENTRY_S3_ENDPOINT: s3.url,
    AGENTRY_S3_BUCKET: bucket,
    AGENTRY_S3_REGION: creds.region,
    AGENTRY_S3_ACCESS_KEY_ID: creds.accessKeyId,
    AGENTRY_S3_SECRET_ACCESS_KEY: creds.secretAccessKey,
  };
}

export async function startS3Server(creds: S3Creds): Promise<FakeS3> {
  const objects = new Map<string, Buffer>();
  const state = { rejected: 0, failDeletes: false, stall: false, endlessGets: false, requests: 0 };
  const server = createServer(async (req, res) => {
    state.requests++;
    const body = await readAll(req);
    if (state.stall) return;
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const auth = String(req.headers.authorization ?? '');
    const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
    const payloadHash = String(req.headers['x-amz-content-sha256'] ?? '');
    let ok = !!m && m[1] === creds.accessKeyId && m[3] === creds.region && payloadHash === createHash('sha256').update(body).digest('hex');
    if (ok) {
      const signed = m![4]!.split(';').filter((h) => h !== 'host' && h !== 'x-amz-date');
      const amz = String(req.headers['x-amz-date']);
      const date = new Date(`${amz.slice(0, 4)}-${amz.slice(4, 6)}-${amz.slice(6, 8)}T${amz.slice(9, 11)}:${amz.slice(11, 13)}:${amz.slice(13, 15)}Z`);
      const expected = signV4({
        method: req.method ?? 'GET',
        url,
        headers: Object.fromEntries(signed.map((h) => [h, String(req.headers[h] ?? '')])),
        payloadHash,
        service: 's3',
        region: creds.region,
        accessKeyId: creds.accessKeyId,
        secretAccessKey: creds.secretAccessKey,
        date,
      });
      ok = expected.authorization === auth;
    }
    if (!ok) {
      state.rejected++;
      res.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>SignatureDoesNotMatch</Code></Error>');
      return;
    }
    const key = decodeURIComponent(url.pathname.slice(1));
    if (req.method === 'PUT') {
      objects.set(key, body);
      res.writeHead(200).end();
    } else if (req.method === 'GET') {
      const obj = objects.get(key);
      if (!obj) res.writeHead(404, { 'content-type': 'application/xml' }).end('<Error><Code>NoSuchKey</Code></Error>');
      else if (state.endlessGets) streamForever(res);
      else res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(obj);
    } else if (req.method === 'DELETE' && state.failDeletes) {
      res.writeHead(503, { 'content-type': 'application/xml' }).end('<Error><Code>ServiceUnavailable</Code></Error>');
    } else if (req.method === 'DELETE') {
      objects.delete(key);
      res.writeHead(204).end();
    } else {
      res.writeHead(405).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    objects,
    get rejected() {
      return state.rejected;
    },
    get failDeletes() {
      return state.failDeletes;
    },
    set failDeletes(v: boolean) {
      state.failDeletes = v;
    },
    get stall() {
      return state.stall;
    },
    set stall(v: boolean) {
      state.stall = v;
    },
    get endlessGets() {
      return state.endlessGets;
    },
    set endlessGets(v: boolean) {
      state.endlessGets = v;
    },
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Stalled requests hold their connections open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
