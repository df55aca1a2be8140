import { describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
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

  it('takes over a lock left by a dead process', () => {
    const dataDir = dir();
    writeFileSync(join(dataDir, 'plumb.lock'), '2147483646');
    const lock = lockDataDir(dataDir);
    lock.release();
  });
});
