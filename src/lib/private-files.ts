import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The data directory holds the database, the master key and uploaded files: readable by the service's user only
 * (directories 0700, files 0600). Modes are given at creation (the umask can only narrow them, so no process-wide
 * umask is changed) and tightened on start for what an older version created 0755/0644.
 */

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Told when a mode cannot be tightened (a path owned by another user): the service still starts. */
export type ModeWarning = (message: string) => void;

/** Removes group and other permissions from an existing path; a missing path is left alone. */
export function tightenMode(path: string, mode: number, warn?: ModeWarning): void {
  let full: number;
  try {
    full = statSync(path).mode;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const current = full & 0o777;
  if ((current & ~mode) === 0) return;
  // A sticky directory is a shared one (/tmp): never a data directory of ours to close.
  if (full & 0o1000) {
    warn?.(`${path} is a shared (sticky) directory with mode ${current.toString(8)}: not changed; give Agentry a directory of its own`);
    return;
  }
  try {
    chmodSync(path, (full & 0o7000) | (current & mode));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'EACCES') throw e;
    warn?.(`${path} has mode ${current.toString(8)} and cannot be changed to ${mode.toString(8)} (${code}): other users may read it`);
  }
}

/** Creates the directory (parents too) as 0700, or tightens it. */
export function ensurePrivateDir(dir: string, warn?: ModeWarning): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tightenMode(dir, PRIVATE_DIR_MODE, warn);
}

/**
 * Creates the file empty as 0600 when missing (SQLite takes an empty file for a new database, and gives its -wal
 * and -shm files the database file's mode), or tightens it.
 */
export function ensurePrivateFile(path: string, warn?: ModeWarning): void {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  tightenMode(path, PRIVATE_FILE_MODE, warn);
}

/** Tightens a directory and its direct subdirectories (the blob store's per-organization folders). */
export function ensurePrivateTree(dir: string, warn?: ModeWarning): void {
  ensurePrivateDir(dir, warn);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) tightenMode(join(dir, entry.name), PRIVATE_DIR_MODE, warn);
  }
}
