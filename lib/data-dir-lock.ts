// One process per data dir: PGlite and chDB would corrupt files written by two processes at once.
// The lock is a pid file created exclusively; a lock left by a dead process is taken over.
// Taking it also closes the dir to everyone but its owner: it holds the metadata (accounts,
// password hashes), the analytics and the JWT secret.
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { envName } from './brand.ts';
import { ConfigError } from './errors.ts';

export interface DataDirLock {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // A dir made by an older version, or by hand, may be open to others: closed from now on.
  chmodSync(dataDir, 0o700);
  const file = join(dataDir, 'plumb.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
        throw new ConfigError(envName('DATA_DIR'), `${dataDir} is in use by another Plumb process (pid ${holder}); the embedded stores allow one process per data dir`);
      }
      rmSync(file, { force: true });
    }
  }
  throw new ConfigError(envName('DATA_DIR'), `could not lock ${dataDir}`);
}

/**
 * Takes group and other permissions off everything under dir. For files a library sets the mode
 * of itself, whatever the umask: PGlite writes its freshly initialised database as 0666.
 */
export function closeToOthers(dir: string): void {
  const stat = lstatSync(dir, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink()) return;
  if ((stat.mode & 0o077) !== 0) chmodSync(dir, stat.mode & 0o700);
  if (stat.isDirectory()) for (const name of readdirSync(dir)) closeToOthers(join(dir, name));
}
