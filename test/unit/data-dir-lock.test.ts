// One process per data dir: a second process is refused with a message naming the holder, the
// lock goes with release, and a lock left by a process that died is taken over.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockDataDir } from '../../lib/data-dir-lock.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'plumb-lock-'));
const lockFile = (dataDir: string) => join(dataDir, 'plumb.lock');
const lockModule = new URL('../../lib/data-dir-lock.ts', import.meta.url).href;

/** Another process tries to lock the dir; it answers "locked" or the message it was refused with. */
function lockFromAnotherProcess(dataDir: string): string {
  const script = `
    const { lockDataDir } = await import(${JSON.stringify(lockModule)});
    try {
      lockDataDir(${JSON.stringify(dataDir)}).release();
      process.stdout.write('locked');
    } catch (err) {
      process.stdout.write(err.message);
    }
  `;
  return execFileSync(process.execPath, ['--input-type=module', '--no-warnings', '-e', script], { encoding: 'utf8' });
}

describe('lockDataDir', () => {
  it('refuses another process while held, naming the holder, and lets it in once released', () => {
    const dataDir = dir();
    const lock = lockDataDir(dataDir);
    expect(readFileSync(lockFile(dataDir), 'utf8')).toBe(String(process.pid));
    expect(lockFromAnotherProcess(dataDir)).toBe(
      `PLUMB_DATA_DIR: ${dataDir} is in use by another Plumb process (pid ${process.pid}); the embedded stores allow one process per data dir`,
    );
    lock.release();
    expect(existsSync(lockFile(dataDir))).toBe(false);
    expect(lockFromAnotherProcess(dataDir)).toBe('locked');
  });

  it('refuses a dir locked by a live process', () => {
    const dataDir = dir();
    writeFileSync(lockFile(dataDir), String(process.ppid));
    expect(() => lockDataDir(dataDir)).toThrow(`is in use by another Plumb process (pid ${process.ppid})`);
    expect(readFileSync(lockFile(dataDir), 'utf8')).toBe(String(process.ppid));
  });

  it('takes over a lock left by a dead process', () => {
    const dataDir = dir();
    writeFileSync(lockFile(dataDir), '2147483646');
    const lock = lockDataDir(dataDir);
    expect(readFileSync(lockFile(dataDir), 'utf8')).toBe(String(process.pid));
    expect(lockFromAnotherProcess(dataDir)).toContain(`(pid ${process.pid})`);
    lock.release();
    expect(existsSync(lockFile(dataDir))).toBe(false);
  });
});
