import { describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveJwtSecret } from '../../lib/auth/jwt-secret.ts';
import { silentLog } from '../../lib/log.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'plumb-jwt-'));

describe('resolveJwtSecret', () => {
  it('generates a secret on first start, private to the owner, and reuses it after', () => {
    const dataDir = dir();
    const first = resolveJwtSecret(undefined, dataDir, silentLog);
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(statSync(join(dataDir, 'jwt-secret')).mode & 0o777).toBe(0o600);
    expect(Buffer.from(resolveJwtSecret(undefined, dataDir, silentLog)).equals(Buffer.from(first))).toBe(true);
  });

  it('uses the configured secret and warns when it is shorter than 32 bytes', () => {
    const warn = jest.fn();
    const log = { ...silentLog, warn };
    expect(Buffer.from(resolveJwtSecret('short', dir(), log)).toString()).toBe('short');
    expect(warn).toHaveBeenCalledTimes(1);
    resolveJwtSecret('x'.repeat(32), dir(), log);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('refuses a truncated stored secret rather than signing with it', () => {
    const dataDir = dir();
    writeFileSync(join(dataDir, 'jwt-secret'), 'abc');
    expect(() => resolveJwtSecret(undefined, dataDir, silentLog)).toThrow(/shorter than 32 bytes/);
    expect(readFileSync(join(dataDir, 'jwt-secret'), 'utf8')).toBe('abc');
  });
});
