import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import { ensurePrivateTree, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../lib/private-files.js';
import type { BlobStore } from './blob-store.types.js';

export type { BlobStore } from './blob-store.types.js';

const KEY_RE = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

function checkKey(key: string): void {
  if (!KEY_RE.test(key) || key.split('/').some((p) => p === '.' || p === '..')) throw new Error(`invalid blob key: ${key}`);
}

/** A directory on local disk (default: `<data dir>/files`). Writes go to a temporary name and are renamed into place. */
export class LocalBlobStore implements BlobStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    checkKey(key);
    const p = resolve(this.root, key);
    if (!p.startsWith(this.root + sep)) throw new Error(`invalid blob key: ${key}`);
    return p;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const target = this.path(key);
    // Uploaded files are the organizations' data: the service's user only (lib/private-files.ts).
    await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
    const tmp = join(dirname(target), `.${randomBytes(6).toString('hex')}.tmp`);
    await writeFile(tmp, bytes, { flush: true, mode: PRIVATE_FILE_MODE });
    await rename(tmp, target);
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.path(key));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}

/**
 * The configured store: the local directory by default, S3-compatible storage when AGENTRY_BLOB_STORE=s3.
 * `maxObjectBytes`: the most a read takes into memory from a remote store, more than any stored file can have.
 */
export async function createBlobStore(blob: Config['blob'], dataDir: string, maxObjectBytes: number): Promise<BlobStore> {
  if (blob.kind === 'local') {
    // Folders an older version created 0755 are tightened; the files inside them sit behind these 0700 folders.
    ensurePrivateTree(join(dataDir, 'files'));
    return new LocalBlobStore(join(dataDir, 'files'));
  }
  const s3 = blob.s3;
  if (!s3?.bucket || !s3.accessKeyId || !s3.secretAccessKey) {
    throw new Error('Invalid configuration: AGENTRY_BLOB_STORE=s3 needs AGENTRY_S3_BUCKET, AGENTRY_S3_ACCESS_KEY_ID and AGENTRY_S3_SECRET_ACCESS_KEY');
  }
  const { S3BlobStore } = await import('./s3-blob-store.js');
  return new S3BlobStore({
    endpoint: s3.endpoint,
    bucket: s3.bucket,
    region: s3.region,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    timeoutMs: s3.timeoutMs,
    maxObjectBytes,
  });
}
