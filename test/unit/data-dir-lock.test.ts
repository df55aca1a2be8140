import { describe, expect, it } from '@jest/globals';
import { chmodSync, existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockDataDir } from '../../lib/data-dir-lock.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'plumb-lock-'));

describe('lockDataDir', () => {
  it('holds the dir until released', () => {
    const dataDir = dir();
    const lock = lockDataDir(dataDir);
    expect(existsSync(join(dataDir, 'plumb.lock'))).toBe(true);
    lock.release();
    expect(existsSync(join(dataDir, 'plumb.lock'))).toBe(false);
    lockDataDir(dataDir).release();
  });

  it('refuses a dir locked by a live process', () => {
    const dataDir = dir();
    writeFileSync(join(dataDir, 'plumb.lock'), String(process.ppid));
    expect(() => lockDataDir(dataDir)).toThrow(`is in use by another Plumb process (pid ${process.ppid})`);
  });

  it('closes the dir and its lock file to everyone but the owner, an existing open dir too', () => {
    const dataDir = dir();
    chmodSync(dataDir, 0o755);
    const lock = lockDataDir(dataDir);
    expect((statSync(dataDir).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(join(dataDir, 'plumb.lock')).mode & 0o777).toString(8)).toBe('600');
    lock.release();
  });

  it('takes over a lock left by a dead process', () => {
    const dataDir = dir();
    writeFileSync(join(dataDir, 'plumb.lock'), '2147483646');
    const lock = lockDataDir(dataDir);
    lock.release();
  });
});
