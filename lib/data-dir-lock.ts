// One process per data dir: PGlite and chDB would corrupt files written by two processes at once.
// The lock is a pid file created exclusively; a lock left by a dead process is taken over.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'plumb.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
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
