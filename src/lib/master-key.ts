import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensurePrivateDir, PRIVATE_FILE_MODE, tightenMode } from './private-files.js';
import { parseMasterKey } from './secret-box.js';

/**
 * The configured master key, or one generated once into the data directory (mode 0600).
 * Processes on several hosts sharing PostgreSQL must be given the same AGENTRY_MASTER_KEY.
 */
export function resolveMasterKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return parseMasterKey(configured);
  const file = join(dataDir, 'master.key');
  if (existsSync(file)) {
    // A key file of an older version may be 0644.
    tightenMode(file, PRIVATE_FILE_MODE);
    return parseMasterKey(readFileSync(file, 'utf8'));
  }
  ensurePrivateDir(dataDir);
  const key = randomBytes(32);
  // 'wx' fails if another process created it first; then read theirs.
  try {
    writeFileSync(file, key.toString('hex') + '\n', { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    return key;
  } catch {
    return parseMasterKey(readFileSync(file, 'utf8'));
  }
}
