// The data dir is its owner's alone: locking it closes the dir (an existing open one too) and
// creates the lock owner-only; closeToOthers takes group and other bits off a whole tree.
import { describe, expect, it } from '@jest/globals';
import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeToOthers, lockDataDir } from '../../lib/data-dir-lock.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'plumb-modes-'));
const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('lockDataDir', () => {
  it('closes the dir and its lock file to everyone but the owner, a dir that was open too', () => {
    const dataDir = dir();
    chmodSync(dataDir, 0o755);
    const lock = lockDataDir(dataDir);
    expect(modeOf(dataDir)).toBe('700');
    expect(modeOf(join(dataDir, 'plumb.lock'))).toBe('600');
    lock.release();
  });
});

describe('closeToOthers', () => {
  it('takes group and other permissions off every file and folder under the dir, keeping the owner’s', () => {
    const root = dir();
    mkdirSync(join(root, 'meta', 'base'), { recursive: true, mode: 0o777 });
    writeFileSync(join(root, 'meta', 'base', 'table'), '', { mode: 0o666 });
    writeFileSync(join(root, 'meta', 'run.sh'), '', { mode: 0o755 });
    chmodSync(join(root, 'meta'), 0o777);
    chmodSync(join(root, 'meta', 'base'), 0o777);
    chmodSync(join(root, 'meta', 'base', 'table'), 0o666);
    closeToOthers(join(root, 'meta'));
    expect([modeOf(join(root, 'meta')), modeOf(join(root, 'meta', 'base')), modeOf(join(root, 'meta', 'base', 'table')), modeOf(join(root, 'meta', 'run.sh'))]).toEqual(['700', '700', '600', '700']);
  });
});
