import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from './logger.js';

/**
 * The data directory holds the database, the raw copy of every synced document, the index and
 * (unless configured) the encryption key: nothing in it is for other users of the machine. Files are
 * created owner-only (umask 077), and at every start what Catchment keeps there is tightened to
 * owner-only, which also repairs directories made by an older version or another umask. Entries
 * Catchment did not create are left alone and named in a warning.
 */

/** What Catchment keeps in the data directory (the socket and lock are the embedded database's). */
const OWN_ENTRIES = new Set(['pglite', 'pglite.json', 'raw', 'lancedb', 'encryption.key', '.s.PGSQL.5432', '.s.PGSQL.5432.lock']);

/** Permission bits of the group and of other users. */
const SHARED_BITS = 0o077;

/**
 * Sets the process umask to 077 (every file created from now on is owner-only), creates the data
 * directory 0700 or tightens it when it is ours, and tightens what Catchment keeps inside.
 */
export function protectDataDirectory(dataDir: string, logger: Logger): void {
  if (process.platform === 'win32') return; // no POSIX modes: NTFS ACLs of the user's profile apply
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const directory = lstatSync(dataDir);
  if (directory.mode & SHARED_BITS) {
    if (directory.uid === process.getuid!()) {
      chmodSync(dataDir, 0o700);
      logger.warn({ dataDir, mode: octal(directory.mode) }, 'the data directory was open to other users: it is now 0700');
    } else {
      logger.warn({ dataDir, mode: octal(directory.mode) }, 'the data directory belongs to another user and is open to others: make it 0700');
    }
  }
  let tightened = 0;
  const failed: string[] = [];
  const foreign: string[] = [];
  for (const entry of readdirSync(dataDir)) {
    const entryPath = path.join(dataDir, entry);
    if (OWN_ENTRIES.has(entry)) {
      const result = tightenTree(entryPath);
      tightened += result.tightened;
      failed.push(...result.failed);
    } else if (lstatSync(entryPath).mode & SHARED_BITS) {
      foreign.push(entry);
    }
  }
  if (tightened) logger.warn({ dataDir, entries: tightened }, 'files of the data directory were readable by other users: they are now owner-only');
  if (failed.length) logger.warn({ dataDir, entries: failed.slice(0, 20), count: failed.length }, 'files of the data directory are readable by other users and could not be changed (another owner?)');
  if (foreign.length) {
    logger.warn({ dataDir, entries: foreign.slice(0, 20), count: foreign.length }, 'the data directory holds entries Catchment did not create that other users can read; they are left as they are');
  }
}

/**
 * Removes group and other permissions from a file or directory tree (symbolic links are not
 * followed). Returns how many entries changed and the paths it could not change.
 */
export function tightenTree(root: string): { tightened: number; failed: string[] } {
  const result = { tightened: 0, failed: [] as string[] };
  const pending = [root];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    let stats;
    try {
      stats = lstatSync(current);
    } catch {
      continue; // removed meanwhile
    }
    if (stats.isSymbolicLink()) continue;
    if (stats.mode & SHARED_BITS) {
      try {
        chmodSync(current, stats.mode & 0o700);
        result.tightened += 1;
      } catch {
        result.failed.push(current);
      }
    }
    if (!stats.isDirectory()) continue;
    try {
      for (const entry of readdirSync(current)) pending.push(path.join(current, entry));
    } catch {
      result.failed.push(current);
    }
  }
  return result;
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');
